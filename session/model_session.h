#pragma once
// One loaded model and what the worker keeps between its requests: the labels of its
// logit columns, the intact run of the last ablated input, and the last run (to resume
// when only later layers' disabled heads changed, or to reuse the positions before text
// typed at the end). Runs on the worker's thread only; no locks.

#include "core/models/model.h"
#include "session/compute_plan.h"
#include "session/request.h"
#include "session/snapshot.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::session {

class ModelSession {
public:
    // Whether the model opened for `choice` is the one held.
    bool holds(const ModelChoice& choice) const { return model_ && held_ && *held_ == choice; }
    // Takes a freshly loaded model; the caches of the one before are let go.
    void adopt(std::unique_ptr<Model> model, const ModelChoice& choice);

    // Everything `request` asks for, as one snapshot (throws headscope::Error on bad input).
    std::shared_ptr<Snapshot> compute(const Request& request, std::uint64_t generation);

private:
    ModelInput encode(const Request& request, const std::string& text, const std::string& image_path) const;
    RunOptions options_for(const Request& request, const Snapshot& snapshot) const;
    void label_outputs(Snapshot& snapshot);
    void run_intact(Snapshot& snapshot, const RunKey& key, const RunOptions& options);
    void measure_heads(Snapshot& snapshot) const;
    void run_second_input(Snapshot& snapshot, const Request& request, const RunOptions& options) const;

    std::shared_ptr<const Model> model_;
    std::optional<ModelChoice> held_;   // what model_ was opened as
    std::shared_ptr<const std::vector<std::string>> output_labels_;
    std::optional<RunKey> intact_key_;
    std::shared_ptr<const ModelTrace> intact_trace_;
    std::optional<RunKey> last_key_;
    std::shared_ptr<const Snapshot> last_run_;
};

}   // namespace headscope::session
