#pragma once
// THE layer loop. Every model runs its blocks through run_blocks, which owns what an
// interactive session asks of a run (RunOptions): the heads switched off and the detail
// kept per layer, the layer inputs and keys / values kept for a later run, resuming at a
// layer from a kept run, reusing a kept run's unchanged prefix (causal models, text typed
// at the end), and each layer's own mask (sliding windows).

#include "core/nn/block.h"
#include "core/nn/run.h"

#include <string>
#include <vector>

namespace headscope {

// A family's stack: what its layers share and each layer's weights.
struct Stack {
    BlockSpec spec;
    std::vector<Block> blocks;     // [L]
    Eigen::Index max_tokens = 0;   // the longest input its positions allow; 0: the family checks (ViT's grids)

    Eigen::Index n_layers() const { return static_cast<Eigen::Index>(blocks.size()); }
    Eigen::Index n_heads() const { return blocks.empty() ? 0 : blocks.front().attention.n_heads; }
};

// L blocks laid out before their weights are loaded: H heads each, both norms LayerNorms
// of `eps`, the MLP's activation; BERT, GPT-2 and ViT differ only in these and `spec`.
Stack layer_norm_stack(BlockSpec spec, Eigen::Index n_layers, Eigen::Index n_heads, float eps, Activation activation);

// What run_blocks gives back: the trace so far (layers, mask, kept inputs) and the
// residual stream after the last block, for the family's final norm and head.
struct StackRun {
    ModelTrace trace;
    Matrix x;                           // [T - first_row, E]: rows first_row .. T-1 after the last block
    Eigen::Index first_row = 0;         // > 0 when a kept run's first rows were reused
    const ModelTrace* kept = nullptr;   // that run

    // `computed` (rows first_row ..) under the kept run's first rows of `member`, when
    // rows were reused; `computed` itself otherwise.
    // (`member`: a Matrix or a SharedMatrix of the trace.)
    template <class Kept>
    Matrix joined(Kept ModelTrace::*member, Matrix computed) const;
};

// Whether a run of `stack` takes a kept run's first rows as they are (RunOptions::prefix_from).
// Not where the rotary positions are turned by angles that depend on the sequence's length
// (dynamic NTK, LongRoPE): a longer run's first rows differ from a kept shorter run's, so
// such a stack computes every row (reusing none is always exact).
bool stack_reuses_prefix(const Stack& stack);

// A decoder stack's reading of an encoder (blocks with cross-attention): the encoder's
// output and which cross-attention heads are off ([L][H] or unsized).
struct CrossAttentionRun {
    const Matrix* memory = nullptr;   // [Ts, E]
    HeadMask disabled_heads;
};

// Runs x [T, E] through every block as `options` ask, under the run's mask: the family's
// own (spec.causal) or the one options.causal asks for, ANDed with options.keep; each
// block's window narrows it. `model` names the model in errors. `last_mlp_rows` >= 0: the
// last block's MLP runs for the first rows only (block_forward). `cross`: the encoder a
// stack with cross-attention reads (every row computed: no resume, no kept prefix); each
// layer's cross-attention goes to the trace's `cross_layers`. Throws headscope::Error
// when x is not [1..max_tokens, E], or a resume or prefix request does not fit the run.
StackRun run_blocks(const std::string& model, const Stack& stack, Matrix x, const RunOptions& options,
                    Eigen::Index last_mlp_rows = -1, const CrossAttentionRun* cross = nullptr);

// Head `head`'s map at `layer` of a run of `stack`: the kept one, or, where the run streamed
// its maps (RunOptions::on_map), computed again from the layer's kept queries and keys,
// bit for bit as the forward computed it. Throws headscope::Error for a layer or head the
// stack does not have.
Matrix stack_head_map(const Stack& stack, const ModelTrace& trace, Eigen::Index layer, Eigen::Index head);

// Every stage of `layer` (TraceDetail::all_stages: the layer's normed input, each head's
// q, k, v, scores, masked scores, weights and context) computed again from a run of
// `stack` that kept its layer inputs (RunOptions::keep_layer_inputs), under that run's
// mask and `disabled_heads` (those it ran with): the numbers that run computed at that
// layer, without running its MLP or any other layer. Throws headscope::Error for a layer
// the stack does not have, or a run that kept no inputs. `only_head` >= 0: that head's
// stages alone (AttentionOptions::stages_head: the other heads left empty); -1: every head.
AttentionTrace stack_layer_stages(const Stack& stack, const ModelTrace& trace, Eigen::Index layer,
                                  const HeadMask& disabled_heads, Eigen::Index only_head);

}   // namespace headscope
