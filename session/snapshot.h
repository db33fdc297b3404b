#pragma once
// One finished computation, as the worker publishes it and the views read it.

#include "core/analysis/ablation_effects.h"
#include "core/analysis/head_metrics.h"
#include "core/image/image.h"
#include "core/models/model.h"
#include "session/map_cache.h"
#include "session/request.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::session {

// One finished computation; never changed after it is published.
struct Snapshot {
    std::uint64_t generation = 0;   // of the request it answers
    ModelChoice model;              // the model that computed it
    // The model itself, for analysis that runs it again off the UI thread (the
    // importance scan); shared, so it outlives a switch to another model.
    std::shared_ptr<const Model> model_ref;
    RunOptions options;   // how `trace` ran (causal, mask, disabled heads)
    // Names the model and everything the trace depends on but the disabled heads (the
    // embeddings, causal, the custom mask), hashed: the window keys analysis by it.
    std::string input_key;
    ModelInfo info;
    ModelInput input;
    // The labels of the maps' columns where they are not the rows' (input.labels): an
    // encoder-decoder's cross-attention as shown (session/attention_kind.h), each target
    // token over the source's. Empty: the maps are square, over input.labels.
    std::vector<std::string> key_labels;
    const std::vector<std::string>& column_labels() const { return key_labels.empty() ? input.labels : key_labels; }
    ModelTrace trace;
    bool causal = false;                // whether trace ran with the causal mask
    bool ablated = false;               // whether some head was disabled in trace
    std::vector<HeadMetrics> metrics;   // [L * H] of trace, layer-major (core/analysis/head_metrics.h)
    // An encoder-decoder's encoder heads' ([Ls * H]) and cross-attention heads' ([L * H])
    // metrics, measured with `metrics` on the worker (session/attention_kind.h: kind_snapshot
    // shows them); empty otherwise.
    std::vector<HeadMetrics> encoder_metrics;
    std::vector<HeadMetrics> cross_metrics;
    // [L * H] the totals `metrics` are means of (HeadMetricSums), for a run measured whole
    // from its maps; empty otherwise. The next run that shares its first positions
    // (text typed or edited at the end) measures only its later rows from them.
    std::vector<HeadMetricSums> metric_sums;
    // Whether the runs streamed their maps (a long input: Request::maps): each layer then
    // keeps its queries and keys, and head_map() computes a map when a view shows it.
    bool maps_streamed = false;
    // When streamed: [L * H] each head's map of trace max-pooled to at most 64 x 64 cells
    // (HeadSummary::pooled_max), made as the run went, for views that show every head.
    std::vector<Matrix> thumbnails;
    // When heads are disabled: the same input and mask with every head on (its maps for
    // the compare view, its output for the effect below). Null otherwise.
    std::shared_ptr<const ModelTrace> intact;
    std::optional<OutputChange> effect;   // how far the disabled heads moved the output
    // Handed on with the maps before the numbers read from them (ComputeControl::on_maps):
    // `metrics` then ends at the first layer computed, and `effect` is not in yet. The
    // snapshot of the same generation that follows has both.
    bool numbers_pending = false;
    // The runs the request's variants asked for (Request::variants), by name.
    std::map<std::string, VariantRun> variants;
    Eigen::Index resumed_at = 0;         // the first layer computed; earlier ones were reused (L: none computed)
    Eigen::Index reused_positions = 0;   // positions copied from the last run (text typed at the end, causal models)
    RgbImage image;                      // image models: the picture as the model saw it (input.pixels)
    double compute_ms = 0.0;             // the computation, without loading the model
    // When heads are disabled and the model has a head: intact's logits [T, V] (or
    // [1, labels]), computed once per model, input and mask. Null otherwise.
    std::shared_ptr<const Matrix> intact_logits;
    // What each logit column means (Model::output_label), [V]; one table per loaded model,
    // shared by its snapshots; null when the model has no head.
    std::shared_ptr<const std::vector<std::string>> output_labels;

    // Head (layer, head)'s attention map [T, T] of `trace`. Views ask for a map here, not
    // in the trace: a streamed run computes it when shown (bit for bit the map the run
    // made). Valid while the snapshot lives.
    std::shared_ptr<const Matrix> head_map(int layer, int head) const { return map_of(trace, layer, head); }
    // The variant `name` of the request, as computed; null where it was not asked.
    const VariantRun* variant(const std::string& name) const {
        const auto found = variants.find(name);
        return found == variants.end() ? nullptr : &found->second;
    }
    // The same for another run of this snapshot (*intact, a variant's).
    std::shared_ptr<const Matrix> map_of(const ModelTrace& run, int layer, int head) const {
        const HeadTrace& kept = head_trace(run, layer, head);
        if (kept.weights.size() != 0 || !model_ref) return {std::shared_ptr<const Matrix>(), &kept.weights};
        return shown_maps->get(*model_ref, run, layer, head);
    }
    // Position `row`'s logits [1, V] of `run` (trace, or *intact): the kept row, or where
    // a long run kept its last row only (Keeps::logits_when_shown), computed from the
    // run's final hidden state (the same numbers). Empty when the run has none for it.
    Matrix logits_row(const ModelTrace& run, int row) const;
    // Whether logits_row(run, row) reads a kept row rather than computing it (the head's
    // product over the vocabulary: GPT-2's 39 M multiply-adds).
    bool logits_kept(const ModelTrace& run, int row) const;
    // How many logits rows the runs give logits_row(): T for a head at every position
    // (language models), their kept rows otherwise (a classifier's one), 0 without a head.
    Eigen::Index logit_rows() const;
    // Its scores before the softmax [T, T], when the run kept that layer's stages; else null.
    const Matrix* head_scores(int layer, int head) const {
        const Matrix& scores = head_trace(trace, layer, head).scores;
        return scores.size() == 0 ? nullptr : &scores;
    }
    // The bytes its runs hold (traces, thumbnails), without the maps computed again for
    // views (shown_maps) and the model's weights.
    double kept_bytes() const;
    // The streamed maps computed again and kept while shown (map_of()).
    std::shared_ptr<MapCache> shown_maps = std::make_shared<MapCache>(0);

private:
    static const HeadTrace& head_trace(const ModelTrace& run, int layer, int head) {
        return run.layers[static_cast<std::size_t>(layer)].heads[static_cast<std::size_t>(head)];
    }
};

}   // namespace headscope::session
