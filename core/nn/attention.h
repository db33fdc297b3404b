#pragma once
// One layer of multi-head attention, as the tutorials compute it, generalised to what
// today's checkpoints add:
//   Q = Xq Wq^T + bq   [Tq, D]      K = Xkv Wk^T + bk   [Tk, Dkv]      V = Xkv Wv^T + bv   [Tk, Dkv]
//   q/k norms (per head, over Dh), then rotary positions, turn Q and K (when the weights have them)
//   per head h (columns h*Dh .. h*Dh+Dh-1 of Q; key/value head h / G, G = H / Hkv):
//     scores = Qh Kh^T * scale  [Tq, Tk] (scale 1/sqrt(Dh) unless set), soft-capped when asked,
//              plus a relative position bias when the weights have one (T5)
//     masked = scores where allowed, -inf elsewhere
//     weights = softmax over keys (a row with no allowed key is all 0, never NaN)
//     context_h = weights Vh        [Tq, Dh]  (0 for a disabled head)
//   concat = [context_0 .. context_H-1]  [Tq, D];   output = concat Wo^T + bo  [Tq, E]
// Self-attention is Xkv = Xq. D = H * Dh may differ from E; keys and values may come
// from a sequence of another length and width (cross-attention: kdim / vdim).

#include "core/nn/mask.h"
#include "core/nn/norm.h"
#include "core/nn/position.h"
#include "core/tensor/matrix.h"
#include "core/tensor/weight_matrix.h"

#include <functional>
#include <vector>

namespace headscope {

// A linear layer as PyTorch stores it: y = x W^T + b.
struct Linear {
    WeightMatrix weight;   // [out, in] (owned, or read in place from a mapped checkpoint)
    Vector bias;           // [out], or empty for a layer without bias
};

// Where each member comes from (core/models/mha/attention_io.h): nn.MultiheadAttention's packed
// `in_proj_weight` rows [0, E) / [E, 2E) / [2E, 3E) (or `q_proj_weight`, `k_proj_weight`,
// `v_proj_weight`) and `in_proj_bias` thirds; or `q_proj.weight`/`.bias` and friends.
struct AttentionWeights {
    Eigen::Index n_heads = 0;      // H
    Eigen::Index n_kv_heads = 0;   // Hkv, each read by G = H / Hkv query heads (grouped queries); 0: H
    Linear q;                      // [D, E]     in_proj_weight[0:E]    | q_proj_weight | q_proj.weight
    Linear k;                      // [Dkv, Ek]  in_proj_weight[E:2E]   | k_proj_weight | k_proj.weight
    Linear v;                      // [Dkv, Ev]  in_proj_weight[2E:3E]  | v_proj_weight | v_proj.weight
    Linear out;                    // [E, D]     out_proj.weight (+ out_proj.bias)
    // Optional, each an attention variant today's families use:
    Norm q_norm;             // [Dh] each query head normalised before the rotation (Qwen 3, Gemma 3); empty: none
    Norm k_norm;             // [Dh] likewise for each key head
    Rotary rotary;           // rotary positions of q and k; inactive: positions come from the embeddings
    float score_scale = 0;   // the scores' factor; 0: 1 / sqrt(Dh)
    float score_cap = 0;     // soft cap: scores = cap * tanh(scores / cap) (Gemma 2); 0: none
    // Added to each head's scores by the key's offset from its query (T5; a query row i of
    // Tq against Tk keys sits at position Tk - Tq + i); inactive: none.
    RelativePositionBias position_bias;
    // Optional, for self-attention: q, k and v stacked ([3D, E], bias [3D] or none), as
    // nn.MultiheadAttention's in_proj_weight and GPT-2's c_attn hold them. One product
    // then makes Q, K and V, reading the input once. Loaders set it where the file packs
    // them (a view, no copy); the separate q, k, v stay the reference.
    Linear qkv;

    Eigen::Index model_width() const { return q.weight.cols(); }                            // E
    Eigen::Index inner_width() const { return q.weight.rows(); }                            // D
    Eigen::Index key_width() const { return k.weight.cols(); }                              // Ek
    Eigen::Index value_width() const { return v.weight.cols(); }                            // Ev
    Eigen::Index head_width() const { return n_heads > 0 ? inner_width() / n_heads : 0; }   // Dh
    Eigen::Index kv_heads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }         // Hkv
    Eigen::Index kv_width() const { return k.weight.rows(); }                               // Dkv = Hkv * Dh
    // The factor applied to q k^T.
    float scale() const;

    // Throws headscope::Error when the shapes do not form one attention layer
    // (H < 1, D not divisible by H, H not a multiple of Hkv, mismatched projections or biases).
    void validate() const;
};

enum class TraceDetail {
    weights,      // per head weights, plus the layer's concat and output: the fast path
    all_stages,   // also q, k, v, scores, masked scores and context per head
};

struct AttentionOptions {
    OptionalMask keep;                  // [Tq, Tk], composed by AND with nothing else here
    std::vector<bool> disabled_heads;   // [H] (or empty): true = the head contributes zero context
    TraceDetail detail = TraceDetail::weights;
    // Keep every head's keys and values side by side (AttentionTrace::keys / values), for a
    // later run over a longer input with the same start (causal models, text typed at the end).
    bool keep_keys_values = false;
    // A sliding window W (self-attention): the query at position i sees keys j > i - W only,
    // W keys up to itself, on top of `keep` (transformers' sliding_window_overlay). Applied
    // to each row's range of keys, never as a [Tq, Tk] mask. 0: none.
    Eigen::Index window = 0;
    // Maps on demand: when set, each head's map goes here as soon as it is computed (on
    // the calling thread, heads in order, the map valid during the call) and is not kept;
    // the trace keeps the layer's queries and keys as multiplied instead, from which
    // head_map() computes any head's map again, bit for bit. A layer's memory then holds
    // a map per compute thread, not H of them. Ignored with TraceDetail::all_stages.
    std::function<void(Eigen::Index head, const Matrix& weights)> on_map = nullptr;
    // With TraceDetail::all_stages: only this head is computed and kept (its stages and
    // map; every other head's are left empty, and the layer's concat and output are not
    // its real ones), for one head's scores at a T x T's memory rather than H of them.
    // -1: every head.
    Eigen::Index stages_head = -1;
};

struct HeadTrace {
    Matrix weights;   // [Tq, Tk] softmax over keys; masked pairs exactly 0; empty when streamed (on_map)
    // Filled only with TraceDetail::all_stages:
    Matrix q;             // [Tq, Dh] after its norm and rotation, as multiplied
    Matrix k;             // [Tk, Dh] likewise (its key/value head's)
    Matrix q_unrotated;   // [Tq, Dh] before the rotation (after the q norm); empty without rotary positions
    Matrix k_unrotated;   // [Tk, Dh] likewise
    Matrix v;             // [Tk, Dh]
    Matrix scores;        // [Tq, Tk] q k^T * scale (soft-capped when the weights ask), before the mask
    Matrix masked;        // [Tq, Tk] scores, -inf where the mask forbids the pair
    Matrix context;       // [Tq, Dh] weights v, or 0 when the head is disabled
};

struct AttentionTrace {
    std::vector<HeadTrace> heads;   // [H]
    Matrix input;                   // [Tq, E] the queries' input X (TraceDetail::all_stages only)
    Matrix concat;                  // [Tq, D] heads' contexts side by side
    Matrix output;                  // [Tq, E]
    Matrix queries;                 // [Tq, D] every head's Q as used, when the maps were streamed (on_map), else empty
    Matrix keys;                    // [Tk, Dkv] every head's K as used (keep_keys_values, or maps streamed), else empty
    Matrix values;                  // [Tk, Dkv] every head's V, likewise
    Eigen::Index window = 0;        // the sliding window that narrowed the run's mask in this layer; 0: none
};

// Whether query row i of a layer with `window` may see key j beyond what the run's mask
// says: a query at position Tk - Tq + i sees keys j > position - W.
inline bool window_allows(Eigen::Index window, Eigen::Index query_position, Eigen::Index key) {
    return window <= 0 || key > query_position - window;
}

// x_q: [Tq, E]; x_kv: [Tk, Ek] (Ek == Ev). Throws headscope::Error on shape mismatch.
AttentionTrace attention_forward(const AttentionWeights& weights, const ConstMatrixRef& x_q, const ConstMatrixRef& x_kv,
                                 const AttentionOptions& options = {});
// Self-attention: keys and values from x itself.
AttentionTrace attention_forward(const AttentionWeights& weights, const ConstMatrixRef& x,
                                 const AttentionOptions& options = {});
// Self-attention of new positions appended after p earlier ones whose keys and values a
// kept run holds (`kept_keys` / `kept_values`, [>= p, Dkv]: their first p rows are used).
// The new positions are p, p+1, ... (their rotary angles). A whole run is the case p = 0
// (the kept matrices are then not read): attention_forward's self-attention is this.
// x_new: [Tn, E], the new positions' input; they attend to all p + Tn keys, so the mask
// is [Tn, p + Tn]. K and V in the result cover all p + Tn positions.
AttentionTrace attention_forward_after(const AttentionWeights& weights, const ConstMatrixRef& x_new,
                                       const Matrix& kept_keys, const Matrix& kept_values, Eigen::Index p,
                                       const AttentionOptions& options = {});

// Head h's map [Tq, Tk] of a layer whose maps were streamed (AttentionOptions::on_map: its
// trace holds the queries and keys), computed as the forward computed it, bit for bit;
// `keep` is the mask the layer ran with (its window is the trace's). A kept map is
// copied. Throws headscope::Error when the trace holds neither.
Matrix head_map(const AttentionWeights& weights, const AttentionTrace& layer, Eigen::Index h, const OptionalMask& keep);

// The scores of head rows q [Tq, Dh] against keys k [Tk, Dh] as attention computes them
// (scale, soft cap), for the views and prefix reuse that need a block of them again. Not
// for weights with a relative position bias (their scores depend on the positions).
Matrix head_scores(const AttentionWeights& weights, const ConstMatrixRef& q, const ConstMatrixRef& k);

// y = x W^T + b, x: [T, in] -> [T, out].
Matrix linear_forward(const Linear& layer, const ConstMatrixRef& x);

// Numerically stable softmax of each row of `scores` in place, over the keys `allowed`
// permits (all when null; else of the scores' shape, or headscope::Error). Disallowed
// entries become exactly 0; a row with no allowed key, or only -inf scores, becomes all 0;
// a NaN score makes the row's allowed entries NaN.
void softmax_rows(MatrixRef scores, const Mask* allowed);

}   // namespace headscope
