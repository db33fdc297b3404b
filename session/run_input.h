#pragma once
// What a run reads, as the person gave it, and the one function that encodes it: the
// window's boxes (the model decides whether it reads the sentence or the picture) or
// one of headscope-cli's input flags. Both programs encode through encode_run_input,
// so a sentence, typed ids or a picture become the same ModelInput in either.

#include "core/base/load_control.h"
#include "core/models/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace headscope::session {

struct RunInput {
    enum class Kind {
        // The window's boxes: the picture for a model of images; else the text, as token
        // ids where `ids_typed` or where the checkpoint has no tokenizer files.
        as_model_reads,
        sentence,    // `text` through the model's tokenizer
        token_ids,   // `text` is token ids, "464, 3797, 3332"
        image,       // the picture at `image_path`
    };
    Kind kind = Kind::as_model_reads;
    std::string text;
    bool ids_typed = false;   // as_model_reads: the text box holds token ids
    std::string image_path;
    ImageOptions image_options;
    // How messages name the ids ("--tokens" on the command line).
    std::string ids_name = "token ids";
    // Zero-shot models (CLIP): the labels the picture is scored against, each a sentence or,
    // with `label_ids`, token ids ("49406, 320, 49407"); any other model refuses them.
    std::vector<std::string> labels;
    bool label_ids = false;
    // How messages name the labels ("--labels" / "--label-tokens" on the command line).
    std::string labels_name = "labels";
    // The command line refuses labels given to a model that scores none; the window keeps
    // its labels box for the next CLIP model and runs any other without them.
    bool unscored_labels_refused = false;
    // A label its model cannot read (too long, an id it lacks): the command line refuses the
    // run; the window scores the others and notes it (ModelInput::prompts_left_out), unless
    // no label is left.
    bool unreadable_labels_left_out = false;

    // Encoder-decoder models (T5, BART): the text or ids above are the source, and the decoder
    // reads `target` (text, or token ids with `target_ids`: the start token first), or the
    // `generate` tokens greedy decoding gives; with neither, its start token alone. Any
    // other model refuses them.
    std::string target;
    bool target_ids = false;
    Eigen::Index generate = 0;
    // How messages name the target ("--target" / "--target-tokens" on the command line).
    std::string target_name = "target";
    // The command line refuses a target (or --generate) given to a model without an
    // encoder; the window keeps its target box for the next encoder-decoder and runs any
    // other model without it.
    bool target_refused_by_other_models = true;

    // Nothing to read (the Compare view's input B before one is typed).
    bool empty() const { return text.empty() && image_path.empty(); }
    bool operator==(const RunInput& other) const = default;
};

// A greedy decoding kept between encodes of one model (ModelSession keeps one): the window
// asks again, with the same source and steps, for every head it switches, and decoding
// runs the whole model once per token.
struct GeneratedTarget {
    std::vector<std::int64_t> source_ids;
    Eigen::Index steps = 0;
    std::vector<std::int64_t> target_ids;   // what the decoding gave
};

// The model's input for `input` (throws headscope::Error naming what is wrong with it),
// with its labels (ModelInput::prompts) where the model scores a picture against them.
// `before`: an input the model encoded earlier (the last run's), whose embeddings the
// positions it shares with this one from the start may take (Model::encode_text_after).
// `generated`: the last greedy decoding of this model, taken when it is this input's
// (same source ids and steps) and else replaced; `control` may stop a decoding between
// tokens (LoadCancelled).
ModelInput encode_run_input(const Model& model, const RunInput& input, const ModelInput& before = {},
                            GeneratedTarget* generated = nullptr, const LoadControl& control = {});

// A text box's token ids: comma-separated whole numbers, spaces and line breaks around
// them ignored ("464, 3797, 3332"), read by the parser of headscope-cli's --tokens;
// `what` names the box in messages.
std::vector<std::int64_t> token_ids_typed(const std::string& text, const std::string& what = "token ids");

}   // namespace headscope::session
