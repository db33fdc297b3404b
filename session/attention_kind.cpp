#include "session/attention_kind.h"

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

KindMaps kind_maps(const Snapshot& run, AttentionKind kind, const std::string& flag) {
    KindMaps maps;
    if (kind == AttentionKind::decoder) {
        maps.trace.layers = run.trace.layers;
        maps.trace.mask = run.trace.mask;
        maps.query_labels = maps.key_labels = run.input.labels;
        maps.model = run.model_ref.get();
        return maps;
    }
    if (!run.info.encoder_decoder || !run.input.source) {
        throw Error(flag + " " + attention_kind_name(kind) + ": " + run.info.name +
                    " has no encoder (the encoder and cross kinds are T5's and BART's)");
    }
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

}   // namespace headscope::session
