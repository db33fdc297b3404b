#pragma once
// What one run through a stack of blocks is asked (RunOptions) and what it gives back
// (ModelTrace): every model's forward speaks these, and run_blocks (core/nn/run_blocks.h)
// is the one place that reads them.

#include "core/nn/attention.h"
#include "core/nn/head_mask.h"
#include "core/nn/layer_traces.h"
#include "core/nn/mask.h"
#include "core/tensor/matrix.h"
#include "core/tensor/shared_matrix.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace headscope {

struct ModelTrace;

struct RunOptions {
    std::optional<bool> causal;   // overrides the model's own default (ModelInfo::causal)
    OptionalMask keep;            // [T, T] pairs allowed, ANDed with the causal mask
    HeadMask disabled_heads;      // [L][H] or unsized: ablated heads
    // Encoder-decoder models: the heads off in the encoder's self-attention and in the
    // decoder's cross-attention ([L][H] or unsized); disabled_heads are the decoder's own.
    HeadMask disabled_encoder_heads;
    HeadMask disabled_cross_heads;
    TraceDetail detail = TraceDetail::weights;   // every layer's
    // One layer that keeps every stage (TraceDetail::all_stages) whatever `detail` says;
    // -1: none. The window's Stages view shows one layer's stages, and keeping them for
    // all layers would triple the memory of a run (three [T, T] matrices per head).
    Eigen::Index stages_layer = -1;
    TraceDetail detail_at(Eigen::Index layer) const { return layer == stages_layer ? TraceDetail::all_stages : detail; }
    // Keep the residual stream entering each layer (ModelTrace::layer_inputs) and each
    // layer's keys and values (AttentionTrace::keys / values), so a later run can resume
    // from it or reuse its start.
    bool keep_layer_inputs = false;
    // Interactive work redoes only what changed: when only heads at layers >= resume_layer
    // are ablated differently from a previous run on the same input (a zero-shot model's
    // labels included) and mask (kept with
    // keep_layer_inputs), the layers before resume_layer are taken from it (shared, not
    // copied: LayerTraces), not computed.
    const ModelTrace* resume_from = nullptr;
    Eigen::Index resume_layer = 0;
    // Causal models (GPT-2), when text was typed or edited at its end: the first
    // `prefix_rows` positions are the same tokens as in `prefix_from` (a run kept with
    // keep_layer_inputs, with the same options and detail), and a position sees none after
    // it, so their rows of every map, activation and logit are copied from it and only the
    // later rows are computed, against the earlier rows' kept keys and values.
    const ModelTrace* prefix_from = nullptr;
    Eigen::Index prefix_rows = 0;
    // Maps on demand: when set, each head's map is handed here as the forward computes it
    // (layer by layer, heads in order, on the calling thread; the map is valid during the
    // call) and not kept: the trace keeps each layer's queries and keys instead, from which
    // stack_head_map() (a Model's head_map()) gives any head's map again, bit for bit (the
    // heads' joined contexts and the output projection are not kept either). A
    // run's memory then holds one map per compute thread, not L x H of them. The stages
    // layer keeps its maps whole. Not with prefix_from; with resume_from only when that run
    // streamed its maps too (the copied layers keep their queries and keys, not maps, and
    // are not handed to on_map again).
    std::function<void(Eigen::Index layer, Eigen::Index head, const Matrix& weights)> on_map = nullptr;
    // Called after each layer is computed (not for layers copied by resume_from), with the
    // layers done so far and L, on the calling thread: a window shows "layer k of L". It
    // may throw (a stop the user asked for); the run is then abandoned and nothing kept.
    std::function<void(Eigen::Index layers_done, Eigen::Index n_layers)> on_layer = nullptr;
    // Decoders: the logits of the last `last_logit_rows` positions only ([n, V], the later
    // rows), where the rest are not read: at T = 4,096 a 128k vocabulary's [T, V] logits
    // are 2 GB. -1: every row's.
    Eigen::Index last_logit_rows = -1;
    // With last_logit_rows: the other rows are computed right after (Model::logits_rows; a
    // window's maps go up first), so the head is laid out for its products once and kept,
    // rather than a slab at a time for the last rows (WeightMatrix::multiply_streamed) and
    // again whole for the rest.
    bool other_logit_rows_follow = false;
};

struct ModelTrace {
    LayerTraces layers;   // [L], shared with the run a run resumed from
    OptionalMask mask;    // [T, T], the same for every layer; absent = all allowed
    // [T, E] after the last layer (and final norm); only the rows a head reads when it
    // reads some alone (a ViT classifier: [1, E], [CLS]; DeiT's with a teacher: [2, E]).
    Matrix hidden;
    // [T, V] or [1, labels]; empty when the model has no head. Shared by copies of the trace.
    SharedMatrix logits;
    // [T]: each row's L2 norm in the residual stream after the last layer, before the final
    // norm, where the model ran every row through it (an image encoder without a head that
    // reads [CLS] alone): Darcet et al.'s high-norm artefact tokens stand out here. Else empty.
    Vector output_norms;
    // [L] x [T, E] entering each layer (RunOptions::keep_layer_inputs), else empty; shared
    // by copies of the trace and by the runs resumed from it.
    std::vector<SharedMatrix> layer_inputs;
    // The positions whose rows of every layer came from RunOptions::prefix_from as they
    // were (0: every row computed, as where the rotation depends on the length).
    Eigen::Index reused_rows = 0;
    // Encoder-decoder models (T5, BART): `layers` and `mask` are the decoder's self-attention
    // over the target; these the encoder's self-attention over the source ([Ls] layers, maps
    // [Ts, Ts]) and each decoder layer's cross-attention ([L] layers, maps [Tt, Ts]). Else empty.
    LayerTraces encoder_layers;
    OptionalMask encoder_mask;
    LayerTraces cross_layers;
    // Zero-shot models (CLIP): each label's run through the text tower, every map kept.
    std::vector<ModelTrace> prompt_traces;
    // [H, T]: each head of an attention-pooling probe's weights over the image tower's output
    // (SigLIP, ModelInfo::probe_heads); else empty.
    Matrix probe_maps;
};

// Whether a kept layer holds every stage (TraceDetail::all_stages) or the maps only.
TraceDetail detail_of(const AttentionTrace& layer);
// The bytes a trace holds (every matrix and mask in it), for a window's memory line;
// without the layers it shares with `counted` (a run it resumed from, counted already).
double trace_bytes(const ModelTrace& trace, const ModelTrace* counted = nullptr);

// Whether a kept layer streamed its maps (RunOptions::on_map): it holds queries and keys, no maps.
bool streamed(const AttentionTrace& layer);

}   // namespace headscope
