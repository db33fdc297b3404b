#pragma once
// The three attentions of an encoder-decoder model (T5, BART) and which one is read: the
// decoder's self-attention (every other model's only kind, ModelTrace::layers), the
// encoder's over the source, or the decoder's cross-attention, each target token over the
// source. The window's views and the CLI's render and analyze read a kind through this.

#include "core/models/model.h"
#include "session/snapshot.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::session {

enum class AttentionKind {
    decoder,   // the model's own maps (a decoder's, an encoder's, an image tower's)
    encoder,   // encoder-decoder models: the encoder's self-attention over the source
    cross,     // encoder-decoder models: the decoder's queries over the encoder's output
};

// "decoder", "encoder", "cross".
const char* attention_kind_name(AttentionKind kind);
std::optional<AttentionKind> attention_kind_named(std::string_view name);

// One kind's maps of a run: its layers and mask as a trace of their own (sharing the run's
// layers, not copies), the labels of its rows (queries) and columns (keys), and whether a
// model must compute them (streamed maps: only the decoder's own are ever streamed).
struct KindMaps {
    ModelTrace trace;
    std::vector<std::string> query_labels;
    std::vector<std::string> key_labels;
    const Model* model = nullptr;   // computes a streamed map; null when every map is kept

    Eigen::Index n_layers() const { return static_cast<Eigen::Index>(trace.layers.size()); }
};

// Throws headscope::Error (naming `flag`) when `info`'s model has no `kind` (the encoder or
// the cross kind of a model without an encoder).
void require_kind(const ModelInfo& info, AttentionKind kind, const std::string& flag = "--kind");

// `run`'s maps of `kind`. Throws headscope::Error (naming `flag`) for the encoder or the
// cross kind of a model without an encoder.
KindMaps kind_maps(const Snapshot& run, AttentionKind kind, const std::string& flag = "--kind");

// How many layers `kind` has in the model `info` describes (the encoder's may differ).
Eigen::Index kind_layers(const ModelInfo& info, AttentionKind kind);
// Whether `info`'s model has `kind` (the encoder and cross kinds are an encoder-decoder's).
bool has_kind(const ModelInfo& info, AttentionKind kind);

// `run` as the window shows its maps of `kind`: a snapshot whose trace, rows' labels
// (input.labels; input.ids the rows' own), columns' labels (key_labels), layers
// (info.n_layers), heads switched off (options.disabled_heads, ablated) and head metrics
// are the kind's, and whose intact run and variants are seen the same way, so every view
// draws any kind unchanged. `run` itself for the decoder kind and for a model without
// that kind. Its model_ref is null: an encoder-decoder keeps every map, and what a model
// would recompute (a hovered head's scores, the importance scan) is the decoder's.
std::shared_ptr<const Snapshot> kind_snapshot(const std::shared_ptr<const Snapshot>& run, AttentionKind kind);

// An encoder-decoder run's encoder and cross-attention metrics (Snapshot::encoder_metrics,
// cross_metrics), measured where the run is made, not where it is shown; nothing for any
// other model.
void measure_kinds(Snapshot& run);

}   // namespace headscope::session
