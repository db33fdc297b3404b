#pragma once
// The options every model-running command shares: which model (--model and the demo
// models' settings), which input (--text | --image | --tokens), and how to run it
// (--causal on|off, --disable-heads L.H,...).

#include "app/cli/cli_errors.h"
#include "core/base/output_file.h"
#include "core/models/model.h"
#include "core/models/toy/toy_models.h"
#include "session/attention_kind.h"
#include "session/model_session.h"
#include "session/request.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace headscope::cli {

struct ModelArgs {
    std::string path;
    ToyConfig config;
    std::string init = "structured";
    std::string bias = "on";
    std::string arch = "classic";
    std::string tower;   // --tower text: a CLIP folder's text tower alone
};
// --model is required unless `model_optional` (bench also runs one synthetic layer).
void add_model_options(CLI::App* cmd, ModelArgs& args, bool model_optional = false);
// The model's own warnings (a checkpoint field ignored) go to `warnings`.
std::unique_ptr<Model> open_model_from(const ModelArgs& args, Warnings& warnings);

struct InputArgs {
    std::string text;
    std::string text_file;
    std::string image;
    std::string tokens;
    CLI::Option* text_option = nullptr;
    CLI::Option* text_file_option = nullptr;
    CLI::Option* image_option = nullptr;
    CLI::Option* tokens_option = nullptr;
    ImageOptions image_options;   // --own-resolution, --max-patches
    std::string labels;           // --labels "a,b,c": zero-shot models' labels
    std::string label_tokens;     // --label-tokens "1,2,3;4,5": the same as token ids
    CLI::Option* labels_option = nullptr;
    CLI::Option* label_tokens_option = nullptr;
    std::string target;          // --target "...": an encoder-decoder model's decoder text
    std::string target_tokens;   // --target-tokens "0,5,6": the same as decoder input ids
    Eigen::Index generate = 0;   // --generate N: the target decoded greedily
    CLI::Option* target_option = nullptr;
    CLI::Option* target_tokens_option = nullptr;
    CLI::Option* generate_option = nullptr;
};
void add_input_options(CLI::App* cmd, InputArgs& args);
// The input the flags name, as the window names its own (session/run_input.h), encoded
// by the same session::encode_run_input. Exactly one of the four must have been given
// (an empty --text is an empty sentence); --text-file is read here.
session::RunInput run_input_from(const InputArgs& args);

// What a writing command reads (the model folder, a --text-file or --image), for
// check_output: an --out that is one of them, or inside the model folder, is refused.
std::vector<InputPath> input_paths(const ModelArgs& model, const InputArgs* input = nullptr);

struct RunArgs {
    std::string causal;          // "", "on" or "off"
    std::string disable_heads;   // "L.H,L.H"
    CLI::Option* disable_option = nullptr;
    // Encoder-decoder models: the encoder's heads and the cross-attention's.
    std::string disable_encoder_heads;
    std::string disable_cross_heads;
    CLI::Option* disable_encoder_option = nullptr;
    CLI::Option* disable_cross_option = nullptr;
};
void add_run_options(CLI::App* cmd, RunArgs& args);
RunOptions run_options_from(const RunArgs& args, const ModelInfo& info);

// --kind (T5, BART): which attention a command reads, `help` saying what it does with it.
void add_kind_option(CLI::App* cmd, std::string& kind, const std::string& help);
// The kind --kind names, refused (naming --kind) where `info`'s model has none of it.
session::AttentionKind kind_from(const std::string& kind, const ModelInfo& info);

// The request a model command makes, as the window makes its own (session/request.h):
// the model, the input, and the causal choice and disabled heads of `options` (checked
// against the model by run_options_from). `keeps` says what the command reads besides
// the maps.
session::Request request_from(const ModelArgs& args, session::RunInput input, const RunOptions& options,
                              session::MapsPolicy maps, const session::Keeps& keeps);
// Runs it through the window's session code (session/model_session.h): the same input
// encoding, room check, maps kept or streamed, metrics and runs.
std::shared_ptr<const session::Snapshot> run_in_session(std::unique_ptr<Model> model, const session::Request& request,
                                                        const session::ComputeControl& control = {});
// The same on the request's input encoded already (dump writes its labels first).
std::shared_ptr<const session::Snapshot> run_in_session(std::unique_ptr<Model> model, const session::Request& request,
                                                        ModelInput input, const session::ComputeControl& control = {});

}   // namespace headscope::cli
