#pragma once
// What a run asks for, from the window or headscope-cli: the model (a built-in name and
// its settings, or a checkpoint folder), the input, the mask and the disabled heads,
// what to keep, and the extra runs a view needs while it is shown (run_variant.h). Plain values,
// compared to tell whether anything changed.

#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/models/toy/toy_models.h"
#include "session/run_input.h"
#include "session/run_variant.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace headscope::session {

struct ModelChoice {
    std::string name = "builtin:toy-text";   // a built-in name or a checkpoint folder
    ToyConfig config;                        // built-in models only
    std::string tower;                       // "text": a CLIP folder's text tower alone; "": the whole model
    bool operator==(const ModelChoice& other) const;
};

// Opens the model a choice names; checkpoint folders report progress to `control`
// and throw LoadCancelled when it says stop.
using ModelLoader = std::function<std::unique_ptr<Model>(const ModelChoice&, const LoadControl&)>;
std::unique_ptr<Model> open_model_choice(const ModelChoice& choice, const LoadControl& control);

// Whether a run keeps every head's map or streams them (maps on demand: each layer keeps
// its queries and keys, and a map is computed again when it is shown).
enum class MapsPolicy {
    automatic,   // streamed when the maps of one run would take more than maps_kept_limit
    keep,
    stream,
};
// All L x H maps of a run kept up to this many bytes (GPT-2 small at 1,024 tokens: 0.6 GB);
// past it a map is computed when shown, and a run holds a few per layer instead.
inline constexpr double maps_kept_limit = 1024.0 * 1024.0 * 1024.0;
// Whether a run of `info` over `T` positions streams its maps under `policy`.
bool streams_maps(MapsPolicy policy, const ModelInfo& info, Eigen::Index T);

// What a request keeps besides its run's maps: the window keeps everything (the views
// read it); a command-line run only what it writes, so a long input holds less.
struct Keeps {
    bool metrics = true;      // each head's metrics (and, maps streamed, a thumbnail)
    bool intact_run = true;   // heads disabled: the run with every head on, and the output change
    bool resumable = true;    // each layer's input, so the next request resumes (a head toggled)
    // Decoders: the logits of the last rows only (RunOptions::last_logit_rows); -1: every row.
    Eigen::Index logit_rows = -1;
    // The window: where the maps are streamed (a long input), a decoder keeps its last
    // row's logits only ([T, V] is 2 GB at T = 4,096 and a 128k vocabulary, twice with the
    // intact run) and computes another row's when it is shown (Snapshot::logits_row).
    bool logits_when_shown = false;
    bool operator==(const Keeps& other) const = default;
};

struct Request {
    ModelChoice model;
    RunInput input;
    std::optional<bool> causal;   // the causal mask; unset: the model's own default
    HeadMask disabled_heads;      // [L][H] or unsized
    // Encoder-decoder models: the encoder's heads off ([encoder layers][H]) and the decoder's
    // cross-attention heads off ([L][H]); unsized: none.
    HeadMask disabled_encoder_heads;
    HeadMask disabled_cross_heads;
    // The mask editor's forbidden (query, key) pairs; pairs past the input's length are ignored.
    std::vector<std::pair<int, int>> forbidden;
    // The runs the shown view needs beside this one (the Compare view's flipped mask or
    // second input), each computed with the same model and options as it says.
    std::vector<RunVariant> variants;
    // The layer whose every stage (q, k, v, scores, ...) to keep, for the Stages view;
    // unset: the maps only, a third of the memory.
    std::optional<int> stages_layer;
    MapsPolicy maps = MapsPolicy::automatic;
    Keeps keeps;
    bool operator==(const Request& other) const = default;
};

}   // namespace headscope::session
