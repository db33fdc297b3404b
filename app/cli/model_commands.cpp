// `headscope-cli models`, `info`, `dump` and `export-weights`: whole models, headless.

#include "app/cli/command.h"
#include "app/cli/model_args.h"
#include "core/base/error.h"
#include "core/base/index_lists.h"
#include "core/models/model_registry.h"
#include "core/tensor/parallel.h"
#include "core/tensor/safetensors.h"
#include "session/run_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace headscope::cli {

namespace {

std::string settings_json(const ModelInfo& info) { return nlohmann::json(info.settings).dump(); }

// "vit, deit": a family's model_types, as `models` lists them.
std::string joined_types(const HfFamily& family) {
    std::string text;
    for (const std::string_view type : family.model_types) text.append(text.empty() ? "" : ", ").append(type);
    return text;
}

}   // namespace

Command add_models_command(CLI::App& app) {
    CLI::App* cmd = app.add_subcommand(
        "models", "List the built-in demo models, and the checkpoint families by config.json's model_type");
    return {cmd, [](Warnings&) {
                for (const BuiltinModel& m : builtin_models()) {
                    std::printf("%-20s %s\n", m.name.c_str(), m.description.c_str());
                }
                std::printf("\nHugging Face checkpoint folders (--model FOLDER), by config.json's model_type:\n");
                for (const HfFamily& family : hf_families()) {
                    std::printf("%-20s %.*s\n", joined_types(family).c_str(),
                                static_cast<int>(family.description.size()), family.description.data());
                }
                return 0;
            }};
}

Command add_info_command(CLI::App& app) {
    auto args = std::make_shared<ModelArgs>();
    CLI::App* cmd = app.add_subcommand("info", "Describe a model: architecture, size and what each head does");
    add_model_options(cmd, *args);
    return {cmd, [args](Warnings& warnings) {
                const auto model = open_model_from(*args, warnings);
                const ModelInfo& info = model->info();
                std::printf("%s: %s\n", info.name.c_str(), info.description.c_str());
                std::printf("input: %s\n", info.takes_text ? "text" : "image");
                if (info.takes_image) {
                    const long patches =
                        static_cast<long>(info.image_size / info.patch_size) * (info.image_size / info.patch_size);
                    std::printf("image: %d x %d px, patches %d x %d px: %ld patches + %ld prefix token(s)\n",
                                info.image_size, info.image_size, info.patch_size, info.patch_size, patches,
                                static_cast<long>(info.max_tokens) - patches);
                } else {
                    std::printf("max tokens: %ld\n", static_cast<long>(info.max_tokens));
                }
                std::printf("layers L = %ld, heads H = %ld, width E = %ld, head width Dh = %ld, MLP width = %ld\n",
                            static_cast<long>(info.n_layers), static_cast<long>(info.n_heads),
                            static_cast<long>(info.width), static_cast<long>(info.head_width),
                            static_cast<long>(info.mlp_width));
                std::printf("parameters: %lld\n", static_cast<long long>(info.n_parameters));
                std::printf("causal: %s\n", info.causal ? "yes" : "no");
                std::printf("settings: %s\n", settings_json(info).c_str());
                if (info.head_roles.empty()) {
                    // A checkpoint's heads have no built role; what they do depends on the input.
                    std::printf("heads: learned; `headscope-cli analyze` measures what each does on an input\n");
                    return 0;
                }
                std::printf("heads:\n");
                for (std::size_t l = 0; l < info.head_roles.size(); ++l) {
                    for (std::size_t h = 0; h < info.head_roles[l].size(); ++h) {
                        const std::string& role = info.head_roles[l][h];
                        std::printf("  %zu.%zu  %s\n", l, h,
                                    role.empty() ? "(random weights: no built-in role)" : role.c_str());
                    }
                }
                return 0;
            }};
}

namespace {

// --only-layers / --only-heads: the indices given, each in [0, n) and given once, in the order given;
// every index when the flag is absent.
std::vector<Eigen::Index> selected(const std::string& flag, const std::string& list, Eigen::Index n, const char* what) {
    std::vector<Eigen::Index> chosen;
    if (list.empty()) {
        for (Eigen::Index i = 0; i < n; ++i) chosen.push_back(i);
        return chosen;
    }
    for (const std::int64_t i : parse_index_list(flag, list, "0,3")) {
        if (i >= n) {
            throw Error(flag + ": " + what + " " + std::to_string(i) + " is outside 0.." + std::to_string(n - 1));
        }
        if (std::find(chosen.begin(), chosen.end(), i) != chosen.end()) {
            throw Error(flag + ": " + what + " " + std::to_string(i) + " is listed twice");
        }
        chosen.push_back(static_cast<Eigen::Index>(i));
    }
    return chosen;
}

constexpr const char* dump_out_help =
    "Output .safetensors: attn.L [H, T, T] per layer, input_ids I64 [T] for text, logits where the model has a "
    "head; metadata 'tokens' (JSON array of labels). CLIP, SigLIP: vision.attn.L, text.I.attn.L and "
    "text.I.input_ids per label, logits_per_image [labels]; SigLIP's pooling probe vision.pool.attn [H, 1, N]. "
    "T5, BART: decoder.attn.L [H, Tt, Tt], encoder.attn.L [H, Ts, Ts] and cross.attn.L [H, Tt, Ts] (every "
    "head), input_ids [Ts], decoder_input_ids [Tt], logits [Tt, V]";

// dump's last line: what was written, an encoder-decoder's two lengths named.
void print_dump_summary(const std::string& out, std::size_t layers, std::size_t heads, const ModelInput& input) {
    if (input.source) {
        std::printf("wrote %s: %zu decoder layers x %zu heads (and every encoder and cross-attention head), "
                    "Ts = %zu, Tt = %zu\n",
                    out.c_str(), layers, heads, input.source->ids.size(), input.labels.size());
    } else {
        std::printf("wrote %s: %zu layers x %zu heads, T = %zu\n", out.c_str(), layers, heads, input.labels.size());
    }
}

}   // namespace

Command add_dump_command(CLI::App& app) {
    struct Args {
        ModelArgs model;
        InputArgs input;
        RunArgs run;
        std::string layers;
        std::string heads;
        std::string out;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("dump", "Every head of every layer of a model on one input, to .safetensors");
    add_model_options(cmd, args->model);
    add_input_options(cmd, args->input);
    add_run_options(cmd, args->run);
    // Not --layers / --heads: those size the demo models (add_model_options).
    cmd->add_option("--only-layers", args->layers, "Only these layers' maps, e.g. 0,15 (default: every layer)");
    cmd->add_option("--only-heads", args->heads,
                    "Only these heads of each layer, e.g. 0,3 (default: every head); attn.L is then "
                    "[count, T, T] in the order given");
    cmd->add_option("--out", args->out, dump_out_help)->required();
    return {cmd, [args](Warnings& warnings) {
                check_output("--out", args->out, input_paths(args->model, &args->input));
                auto model = open_model_from(args->model, warnings);
                const ModelInfo info = model->info();
                const RunOptions options = run_options_from(args->run, info);
                const std::vector<Eigen::Index> layers =
                    selected("--only-layers", args->layers, info.n_layers, "layer");
                const std::vector<Eigen::Index> heads = selected("--only-heads", args->heads, info.n_heads, "head");
                // A language model's [T, V] logits (2 GB at T = 4,096 and a 128k vocabulary)
                // are computed from the run's final hidden state and written a piece of
                // rows at a time; a classifier's or an encoder's come whole with the run.
                const bool logits_in_pieces = info.n_outputs > 0 && info.causal && !info.classifier;
                using session::logit_piece_rows;
                // The window's session runs it, its maps streamed into the file (a dump reads
                // no metrics, no intact run, nothing to resume).
                const session::Keeps keeps{
                    .metrics = false, .intact_run = false, .resumable = false, .logit_rows = logits_in_pieces ? 0 : -1};
                const session::Request request =
                    request_from(args->model, run_input_from(args->input), options, session::MapsPolicy::stream, keeps);
                ModelInput input = session::encode_run_input(*model, request.input);
                const auto T = static_cast<std::int64_t>(input.labels.size());
                check_streamed_run_fits(info, T, compute_threads(),
                                        logits_in_pieces ? logit_piece_rows : -1);   // before the file is made

                // The header first, then each map written where it goes as the forward makes
                // it: the file never needs more than the maps the forward holds at once.
                const std::vector<SafetensorsWriter::Entry> entries =
                    session::run_file_entries(info, input, layers, heads.size(), true);
                std::map<std::string, std::string> metadata =
                    session::run_file_metadata(info, input, options.causal.value_or(info.causal));
                if (!args->layers.empty()) metadata["layers"] = nlohmann::json(layers).dump();
                if (!args->heads.empty()) metadata["heads"] = nlohmann::json(heads).dump();
                SafetensorsWriter file(args->out, entries, metadata);
                session::write_run_input_ids(file, input);
                const std::uint64_t map_bytes = static_cast<std::uint64_t>(T * T) * sizeof(float);
                session::ComputeControl control;
                control.on_map = [&](Eigen::Index layer, Eigen::Index head, const Matrix& weights) {
                    const auto l = std::find(layers.begin(), layers.end(), layer);
                    const auto h = std::find(heads.begin(), heads.end(), head);
                    if (l == layers.end() || h == heads.end()) return;
                    file.write(session::run_file_map_key(info, layer),
                               static_cast<std::uint64_t>(h - heads.begin()) * map_bytes,
                               std::as_bytes(std::span(weights.data(), static_cast<std::size_t>(weights.size()))));
                };
                const auto run = run_in_session(std::move(model), request, std::move(input), control);
                session::write_run_zero_shot(file, *run);
                session::write_run_encoder_decoder(file, *run);
                if (session::run_file_has_logits(info, run->input))
                    session::write_run_logits(file, *run, logits_in_pieces);
                file.finish();
                print_dump_summary(args->out, layers.size(), heads.size(), run->input);
                return 0;
            }};
}

Command add_export_weights_command(CLI::App& app) {
    struct Args {
        ModelArgs model;
        std::string out;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("export-weights", "Write every weight of a built-in model, so a reference "
                                                         "implementation can run the same model");
    add_model_options(cmd, args->model);
    cmd->add_option("--out", args->out, "Output .safetensors (F32)")->required();
    return {cmd, [args](Warnings& warnings) {
                check_output("--out", args->out, input_paths(args->model));
                const auto model = open_model_from(args->model, warnings);
                const std::vector<OwnedTensor> owned = model->export_weights();
                std::vector<TensorToWrite> tensors;
                for (const OwnedTensor& t : owned) tensors.push_back(tensor_f32(t.name, t.shape, t.values));
                write_safetensors(args->out, tensors,
                                  {{"model", model->info().name}, {"settings", settings_json(model->info())}});
                std::printf("wrote %s: %zu tensors, %lld parameters\n", args->out.c_str(), owned.size(),
                            static_cast<long long>(model->info().n_parameters));
                return 0;
            }};
}

}   // namespace headscope::cli
