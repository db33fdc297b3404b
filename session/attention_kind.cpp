#include "session/attention_kind.h"

#include "core/analysis/head_metrics.h"
#include "core/base/error.h"

namespace headscope::session {

const char* attention_kind_name(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::decoder: return "decoder";
    case AttentionKind::encoder: return "encoder";
    case AttentionKind::cross: return "cross";
    }
    return "decoder";
}

std::optional<AttentionKind> attention_kind_named(std::string_view name) {
    for (const AttentionKind kind : {AttentionKind::decoder, AttentionKind::encoder, AttentionKind::cross}) {
        if (name == attention_kind_name(kind)) return kind;
    }
    return std::nullopt;
}

void require_kind(const ModelInfo& info, AttentionKind kind, const std::string& flag) {
    if (has_kind(info, kind)) return;
    throw Error(flag + " " + attention_kind_name(kind) + ": " + info.name +
                " has no encoder (the encoder and cross kinds are T5's and BART's)");
}

KindMaps kind_maps(const Snapshot& run, AttentionKind kind, const std::string& flag) {
    KindMaps maps;
    if (kind == AttentionKind::decoder) {
        maps.trace.layers = run.trace.layers;
        maps.trace.mask = run.trace.mask;
        maps.query_labels = maps.key_labels = run.input.labels;
        maps.model = run.model_ref.get();
        return maps;
    }
    require_kind(run.info, kind, flag);
    if (!run.input.source) throw Error(flag + " " + attention_kind_name(kind) + ": the run has no source");
    const std::vector<std::string>& source = run.input.source->labels;
    if (kind == AttentionKind::encoder) {
        maps.trace.layers = run.trace.encoder_layers;
        maps.trace.mask = run.trace.encoder_mask;
        maps.query_labels = maps.key_labels = source;
    } else {
        maps.trace.layers = run.trace.cross_layers;
        maps.query_labels = run.input.labels;
        maps.key_labels = source;
    }
    return maps;
}

Eigen::Index kind_layers(const ModelInfo& info, AttentionKind kind) {
    return kind == AttentionKind::encoder ? info.encoder_layers : info.n_layers;
}

bool has_kind(const ModelInfo& info, AttentionKind kind) {
    return kind == AttentionKind::decoder || info.encoder_decoder;
}

namespace {

// `trace`'s maps of `kind` in the place of its own (the decoder's).
ModelTrace kind_trace(const ModelTrace& trace, AttentionKind kind) {
    ModelTrace seen = trace;
    seen.layers = kind == AttentionKind::encoder ? trace.encoder_layers : trace.cross_layers;
    seen.mask = kind == AttentionKind::encoder ? trace.encoder_mask : OptionalMask{};
    seen.encoder_layers = {};
    seen.cross_layers = {};
    seen.encoder_mask.reset();
    return seen;
}

// `input`'s rows of `kind`: the source's for the encoder, the target's (as they are) for cross.
void take_kind_rows(ModelInput& input, AttentionKind kind) {
    if (kind != AttentionKind::encoder || !input.source) return;
    const std::shared_ptr<const ModelInput> source = input.source;
    input.labels = source->labels;
    input.ids = source->ids;
    input.spans = source->spans;
}

// The head metrics of `trace` (already of `kind`) over `input` (the run's, not yet seen as the kind).
std::vector<HeadMetrics> kind_metrics(const ModelTrace& trace, const ModelInput& input, const ModelInfo& info,
                                      AttentionKind kind) {
    const MetricContext source = metric_context(*input.source, info);
    if (kind == AttentionKind::encoder) return compute_model_metrics(trace, source);
    std::vector<HeadMetrics> metrics;
    for (std::size_t l = 0; l < trace.layers.size(); ++l) {
        for (std::size_t h = 0; h < trace.layers[l].heads.size(); ++h) {
            HeadMetrics m = compute_cross_metrics(trace.layers[l].heads[h].weights, source.special, source.top_k);
            m.layer = static_cast<int>(l);
            m.head = static_cast<int>(h);
            metrics.push_back(m);
        }
    }
    return metrics;
}

}   // namespace

void measure_kinds(Snapshot& run) {
    if (!run.info.encoder_decoder || !run.input.source) return;
    for (const AttentionKind kind : {AttentionKind::encoder, AttentionKind::cross}) {
        (kind == AttentionKind::encoder ? run.encoder_metrics : run.cross_metrics) =
            kind_metrics(kind_trace(run.trace, kind), run.input, run.info, kind);
    }
}

std::shared_ptr<const Snapshot> kind_snapshot(const std::shared_ptr<const Snapshot>& run, AttentionKind kind) {
    if (!run || kind == AttentionKind::decoder || !run->info.encoder_decoder || !run->input.source) return run;
    auto seen = std::make_shared<Snapshot>(*run);
    seen->trace = kind_trace(run->trace, kind);
    seen->info.n_layers = kind_layers(run->info, kind);
    seen->info.head_roles.clear();   // a demo model's roles are its decoder's
    seen->input.prompts.clear();
    take_kind_rows(seen->input, kind);
    if (kind == AttentionKind::cross) seen->key_labels = run->input.source->labels;
    seen->options.disabled_heads =
        kind == AttentionKind::encoder ? run->options.disabled_encoder_heads : run->options.disabled_cross_heads;
    seen->ablated = seen->options.disabled_heads.any();
    // causal stays the run's: flipping the decoder's mask moves its cross-attention too
    // Measured on the worker (measure_kinds) where the run kept its numbers, else here.
    const std::vector<HeadMetrics>& kept = kind == AttentionKind::encoder ? run->encoder_metrics : run->cross_metrics;
    seen->metrics = !kept.empty() ? kept : kind_metrics(seen->trace, run->input, run->info, kind);
    seen->encoder_metrics.clear();
    seen->cross_metrics.clear();
    seen->metric_sums.clear();
    seen->thumbnails.clear();
    seen->maps_streamed = false;
    if (run->intact) seen->intact = std::make_shared<const ModelTrace>(kind_trace(*run->intact, kind));
    for (auto& [name, variant] : seen->variants) {
        if (variant.trace) variant.trace = kind_trace(*variant.trace, kind);
        if (variant.input) take_kind_rows(*variant.input, kind);
    }
    seen->model_ref.reset();
    // Keys of analysis by input: the kind's maps are other maps.
    seen->input_key += std::string(" kind=") + attention_kind_name(kind);
    return seen;
}

}   // namespace headscope::session
