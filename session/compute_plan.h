#pragma once
// What of the last run a new request can reuse: the layers before the first one whose
// disabled heads changed (resume), or the positions before the first one whose
// embedding changed (prefix reuse: text typed at the end on a causal model). Pure
// functions of the two runs' keys and options, so each rule is unit-tested alone.

#include "core/nn/run.h"
#include "session/request.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace headscope::session {

// What a trace depends on besides the model (a new model empties the caches) and the
// disabled heads: the embeddings themselves, not the path they came from (a picture
// rewritten on disk under the same name is another input), and the mask.
struct RunKey {
    Matrix embeddings;
    bool causal = false;
    std::vector<std::pair<int, int>> forbidden;
    // A zero-shot model's labels (ModelInput::prompts), each as its token ids: they change
    // the logits, the intact run's and every number read from them.
    std::vector<std::vector<std::int64_t>> label_ids;
    // An encoder-decoder model's source (ModelInput::source), as its token ids: the target's
    // embeddings alone do not say what the decoder reads.
    std::vector<std::int64_t> source_ids;
    bool operator==(const RunKey& other) const;
};
// The key of a run of `input`.
RunKey run_key(const ModelInput& input, bool causal, const std::vector<std::pair<int, int>>& forbidden);

// A short text naming the model and the run key (a hash), for the window's analysis caches.
std::string input_key_text(const ModelChoice& model, const RunKey& key);

// The last run, as far as reuse is concerned.
struct LastRun {
    const RunKey* key = nullptr;           // null: no last run of this model
    const RunOptions* options = nullptr;   // how it ran
    const ModelTrace* trace = nullptr;     // kept with its layer inputs (keep_layer_inputs)
};

// How the next run starts.
struct ReusePlan {
    Eigen::Index resume_layer = 0;   // > 0, or = 0 with `resume`: layers before it are the last run's
    bool resume = false;             // rerun from resume_layer on the same input
    Eigen::Index prefix_rows = 0;    // > 0: positions before it are the last run's
};

// Resume when only the disabled heads (or the layer whose stages are kept) changed;
// else reuse the common prefix of a causal, unmasked input with the same heads.
ReusePlan plan_reuse(const LastRun& last, const RunKey& key, const RunOptions& options, Eigen::Index n_layers);

// Applies `plan` to `options`, pointing them at `last`'s trace.
void apply_reuse(const ReusePlan& plan, const LastRun& last, RunOptions& options);

}   // namespace headscope::session
