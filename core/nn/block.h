#pragma once
// The transformer block, described as data. Every family (the demo models, GPT-2, BERT,
// ViT / DeiT, and the decoder families to come) fills a BlockSpec and a Block per layer;
// block_forward is the only code that runs one, and run_blocks (core/nn/run_blocks.h)
// the only loop over them.
//
//   pre-norm, sequential (GPT-2, ViT, Llama):  x += attn(n1(x));  x += mlp(n2(x))
//   post-norm, sequential (BERT):              x = n1(x + attn(x));  x = n2(x + mlp(x))
//   pre-norm, parallel (GPT-J, Pythia, Phi):   x += attn(n1(x)) + mlp(n2(x))   (n2 empty: n1(x) feeds both)
//   pre- and post-norm (Gemma 2, 3):           x += o1(attn(n1(x)));  x += o2(mlp(n2(x)))
//   pre-norm, LayerScale (DINOv2):             x += g1 * attn(n1(x));  x += g2 * mlp(n2(x))
// A decoder's block of an encoder-decoder model (T5, BART) attends to the encoder's output m
// between the two, in the same placement:
//   pre-norm (T5):    x += attn(n1(x));  x += cross(nc(x), m);  x += mlp(n2(x))
//   post-norm (BART): x = n1(x + attn(x));  x = nc(x + cross(x, m));  x = n2(x + mlp(x))

#include "core/nn/attention.h"
#include "core/nn/layers.h"
#include "core/nn/norm.h"

namespace headscope {

enum class NormPlacement {
    pre,    // each sublayer reads a normalised copy; the residual stream itself is never normalised
    post,   // the residual sum after each sublayer is normalised
};

enum class Residual {
    sequential,   // the MLP reads the stream after attention's update
    parallel,     // attention and the MLP read the same stream; both updates are added
};

// What every layer of a family shares.
struct BlockSpec {
    NormPlacement norm_placement = NormPlacement::pre;
    Residual residual = Residual::sequential;
    // The family's own mask: causal (decoders: GPT-2, Llama) or bidirectional (encoders);
    // RunOptions::causal overrides it, and RunOptions::keep narrows it.
    bool causal = false;
};

struct Block {
    Norm attention_norm;          // pre: attention's input; post: the sum after attention
    AttentionWeights attention;   // heads, grouped keys/values, rotary, q/k norms, score scale and cap
    Norm mlp_norm;                // pre: the MLP's input; post: the sum after it; parallel and empty: n1's output
    Mlp mlp;
    // Pre-norm blocks only: norms of each sublayer's output before it joins the stream
    // (Gemma 2 and 3's post_attention_layernorm, post_feedforward_layernorm); empty: none.
    Norm attention_output_norm;
    Norm mlp_output_norm;
    // Pre-norm, sequential blocks only: LayerScale (DINOv2's layer_scale1 / layer_scale2), each
    // sublayer's output times a learned per-channel factor [E] before it joins the stream,
    // after any output norm; empty: none.
    Vector attention_output_scale;
    Vector mlp_output_scale;
    // A sliding window (a query sees its W latest keys, itself included), on top of the
    // run's mask; 0: the run's mask alone.
    Eigen::Index window = 0;
    // Sequential blocks of a decoder reading an encoder (T5's EncDecAttention, BART's
    // encoder_attn): queries from the stream, keys and values from the encoder's output;
    // no heads: none.
    Norm cross_attention_norm;   // pre: the cross-attention's input; post: the sum after it
    AttentionWeights cross_attention;

    bool has_cross_attention() const { return cross_attention.n_heads > 0; }
};

// A block's cross-attention step: what it reads and, after block_forward, what it computed.
struct CrossAttentionStep {
    const Matrix* memory = nullptr;   // [Ts, E] the encoder's output (final norm applied)
    AttentionOptions options;         // disabled heads, detail; no mask (every source position is seen)
    AttentionTrace trace;             // filled by block_forward: the queries [Tt] against the source [Ts]
};

// Positions a block's run comes after: the first `p` of a kept run over the same tokens,
// whose keys and values `layer` holds (a causal model's text typed at its end). The
// default, no position, is a whole run.
struct KeptPositions {
    const AttentionTrace* layer = nullptr;
    Eigen::Index p = 0;
};

// One block over x [T, E] (the positions after `after`'s), in place; returns its
// attention, the queries against all p + T keys. `mlp_rows` >= 0: only x's first rows go
// through the MLP (the last layer of a classifier that reads [CLS] alone; 0: none, for a
// layer's stages alone); the other rows are then left after attention (and its norm, in a
// post-norm block), not to be read.
// `cross`: for a block with cross-attention, the encoder's output it reads and where its
// attention goes (required there, but for a layer's stages alone, mlp_rows = 0, which stop
// before it; refused elsewhere).
AttentionTrace block_forward(const BlockSpec& spec, const Block& block, Matrix& x, const AttentionOptions& options,
                             Eigen::Index mlp_rows = -1, const KeptPositions& after = {},
                             CrossAttentionStep* cross = nullptr);

}   // namespace headscope
