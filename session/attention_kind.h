#pragma once
// The three attentions of an encoder-decoder model (T5, BART) and which one is read: the
// decoder's self-attention (every other model's only kind, ModelTrace::layers), the
// encoder's over the source, or the decoder's cross-attention, each target token over the
// source. The window's views and the CLI's render and analyze read a kind through this.

#include "core/models/model.h"
#include "session/snapshot.h"

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

// `run`'s maps of `kind`. Throws headscope::Error (naming `flag`) for the encoder or the
// cross kind of a model without an encoder.
KindMaps kind_maps(const Snapshot& run, AttentionKind kind, const std::string& flag = "--kind");

}   // namespace headscope::session
