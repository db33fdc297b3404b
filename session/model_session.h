#pragma once
// One loaded model and what the worker keeps between its requests: the labels of its
// logit columns, the intact run of the last ablated input, and the last run (to resume
// when only later layers' disabled heads changed, or to reuse the positions before text
// typed at the end). Runs on the worker's thread only; no locks.

#include "core/base/error.h"
#include "core/models/model.h"
#include "session/compute_plan.h"
#include "session/request.h"
#include "session/snapshot.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::session {

// Where a computation is: which run of the request ("", "intact", or a variant's name)
// and how many of its layers are done.
struct ComputeProgress {
    std::string run;
    Eigen::Index layers_done = 0;
    Eigen::Index n_layers = 0;
    // The main run of a model whose maps are streamed (a long input): the thumbnails and
    // metrics of every head of the layers done so far ([layers_done * H], layer-major, as
    // Snapshot::thumbnails and ::metrics), so the views fill in as layers land; null
    // otherwise.
    std::shared_ptr<const std::vector<Matrix>> landed_thumbnails;
    std::shared_ptr<const std::vector<HeadMetrics>> landed_metrics;
    std::string model;   // the model computing (ModelChoice::name), with what landed
};

// What the caller of a long computation sees and can do while it runs.
struct ComputeControl {
    std::function<void(const ComputeProgress&)> on_progress;   // after each layer, on the computing thread
    const std::atomic<bool>* cancel = nullptr;                 // set to true (from any thread) to stop
    // When set, the main run streams its maps (whatever Request::maps says) and hands each
    // here as it is made (RunOptions::on_map): `dump` writes them to its file.
    std::function<void(Eigen::Index layer, Eigen::Index head, const Matrix& weights)> on_map;
    // When set, a long run's maps are handed here (on the computing thread) as soon as the
    // forward is done, before the numbers read from them: the metrics of the layers it
    // computed and the output change of the disabled heads, which on a long input take
    // long enough to see. That snapshot says so (Snapshot::numbers_pending); the one
    // compute() returns has everything.
    std::function<void(std::shared_ptr<const Snapshot> maps_only)> on_maps;
    // The numbers' work (map cells measured + 1.5 x logits compared; roughly a millisecond
    // per million on two cores) below which one publish (and one redraw) is enough.
    double maps_first_above = 30e6;
};

// A computation stopped through ComputeControl::cancel; nothing of it was kept.
class ComputeCancelled : public Error {
public:
    ComputeCancelled() : Error("the computation was stopped") {}
};

class ModelSession {
public:
    // Whether the model opened for `choice` is the one held.
    bool holds(const ModelChoice& choice) const { return model_ && held_ && *held_ == choice; }
    // Takes a freshly loaded model; the caches of the one before are let go.
    void adopt(std::shared_ptr<const Model> model, const ModelChoice& choice);

    // Everything `request` asks for, as one snapshot (throws headscope::Error on bad input,
    // ComputeCancelled when stopped through `control`).
    std::shared_ptr<Snapshot> compute(const Request& request, std::uint64_t generation,
                                      const ComputeControl& control = {});
    // The same on `request.input` encoded already (encode_run_input): headscope-cli's
    // `dump` writes the input's labels before the run.
    std::shared_ptr<Snapshot> compute_on(const Request& request, ModelInput input, std::uint64_t generation,
                                         const ComputeControl& control = {});
    // The model held, shared with the snapshots.
    std::shared_ptr<const Model> model() const { return model_; }

private:
    RunOptions options_for(const Request& request, const Snapshot& snapshot) const;
    void label_outputs(Snapshot& snapshot);
    // `logit_rows`: as RunOptions::last_logit_rows.
    void check_room(const Snapshot& snapshot, Eigen::Index logit_rows) const;
    // The request's own run (resumed from the last where it can be).
    void run_main(Snapshot& snapshot, const RunKey& key, const Request& request, RunOptions options,
                  const ComputeControl& control);
    // The run with every head on beside an ablated one (snapshot.intact), made or taken.
    void take_intact(Snapshot& snapshot, const RunKey& key, RunOptions options, const ComputeControl& control);
    // Hands `snapshot` as it is to control.on_maps when the numbers still to compute are
    // worth showing the maps before; leaves `snapshot` the same.
    void publish_maps_first(std::shared_ptr<Snapshot>& snapshot, const Request& request, const ComputeControl& control,
                            std::chrono::steady_clock::time_point start) const;
    void stream_maps(Snapshot& snapshot, const Request& request, RunOptions& options,
                     const ComputeControl& control) const;
    // Whether run_main leaves a decoder's head over every position until after the maps are
    // up (the last row computed with them): when they go up first and the head would take
    // long enough to see.
    bool defers_logits(const Snapshot& snapshot, const Request& request, const RunOptions& options,
                       const ComputeControl& control) const;
    // The logits rows a run left for after its maps (defers_logits): the positions it
    // reused, the last run's rows; the others computed from its final hidden state. After
    // it, the trace holds every row, as a run that kept them.
    void complete_logits(Snapshot& snapshot, const ComputeControl& control) const;
    // The metrics of the layers a resumed run took from the last run, copied from it.
    void reuse_metrics(Snapshot& snapshot) const;
    // The metrics of the layers the run computed (after reuse_metrics).
    void measure_heads(Snapshot& snapshot) const;
    // The first row of the maps measure_heads must read: the positions the model reused
    // from the last run (Snapshot::reused_positions) when that run kept every head's
    // totals through them and the metrics read the same ids and special tokens there; else 0.
    Eigen::Index measured_rows_reusable(const Snapshot& snapshot, const MetricContext& context) const;
    // The run this session holds that answers `snapshot`'s request already, or null: with
    // every head on again, the intact run kept while heads were off (switching the last
    // head back on), when it ran as this request asks.
    const Snapshot* held_answer(const Snapshot& snapshot, const RunKey& key, const Request& request) const;
    // One of the request's variants (run_variant.h) into snapshot.variants.
    void run_variant(Snapshot& snapshot, const RunVariant& variant, RunOptions options,
                     const ComputeControl& control) const;

    std::shared_ptr<const Model> model_;
    std::optional<ModelChoice> held_;   // what model_ was opened as
    std::shared_ptr<const std::vector<std::string>> output_labels_;
    std::optional<RunKey> intact_key_;
    std::shared_ptr<const ModelTrace> intact_trace_;
    bool intact_streamed_ = false;   // whether intact_trace_ streamed its maps
    // When intact_trace_ is a whole run the session made (the one before a head was
    // switched off), that run: it can be shown again as it is.
    std::shared_ptr<const Snapshot> intact_run_;
    std::optional<RunKey> last_key_;
    std::shared_ptr<const Snapshot> last_run_;
    GeneratedTarget generated_;   // the last greedy decoding (encode_run_input)
};

}   // namespace headscope::session
