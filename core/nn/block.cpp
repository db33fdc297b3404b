#include "core/nn/block.h"

#include "core/base/error.h"

namespace headscope {

namespace {

bool has_norm(const Norm& norm) { return norm.weight.size() != 0; }

// One block with `attend` (the normalised or raw input -> its attention) as the step that
// differs between a full run and a run after kept positions.
template <typename Attend>
AttentionTrace run_block(const BlockSpec& spec, const Block& block, Matrix& x, Eigen::Index mlp_rows,
                         CrossAttentionStep* cross, Attend&& attend) {
    const Eigen::Index n = mlp_rows >= 0 ? std::min(mlp_rows, x.rows()) : x.rows();   // the MLP's rows
    const bool scaled = block.attention_output_scale.size() != 0 || block.mlp_output_scale.size() != 0;
    if (scaled && (spec.norm_placement == NormPlacement::post || spec.residual == Residual::parallel)) {
        throw Error("LayerScale needs a pre-norm, sequential block");
    }
    const bool reads_memory = cross != nullptr && cross->memory != nullptr;
    // A layer's stages alone (no row through the MLP) stop before the cross-attention.
    if (block.has_cross_attention() != reads_memory && !(mlp_rows == 0 && !reads_memory)) {
        throw Error(block.has_cross_attention() ? "a block with cross-attention needs the encoder's output"
                                                : "a block without cross-attention was given an encoder's output");
    }
    if (!reads_memory) cross = nullptr;
    if (cross != nullptr && spec.residual == Residual::parallel) {
        throw Error("cross-attention needs a sequential block");
    }
    if (spec.norm_placement == NormPlacement::post) {
        if (spec.residual == Residual::parallel) throw Error("a block cannot be both post-norm and parallel");
        AttentionTrace attention = attend(x);
        x = norm_forward(block.attention_norm, x + attention.output);
        if (cross != nullptr) {
            cross->trace = attention_forward(block.cross_attention, x, *cross->memory, cross->options);
            x = norm_forward(block.cross_attention_norm, x + cross->trace.output);
        }
        auto rows = x.topRows(n);
        rows = norm_forward(block.mlp_norm, rows + mlp_forward(block.mlp, rows));
        return attention;
    }
    const Matrix attention_input = norm_forward(block.attention_norm, x);   // [T, E]
    AttentionTrace attention = attend(attention_input);
    if (has_norm(block.attention_output_norm)) {
        attention.output = norm_forward(block.attention_output_norm, attention.output);
    }
    if (block.attention_output_scale.size() != 0) {
        attention.output.array().rowwise() *= block.attention_output_scale.transpose().array();
    }
    if (spec.residual == Residual::parallel) {
        const Matrix mlp_out = has_norm(block.mlp_norm)
                                   ? mlp_forward(block.mlp, norm_forward(block.mlp_norm, x.topRows(n)))
                                   : mlp_forward(block.mlp, attention_input.topRows(n));
        x += attention.output;
        x.topRows(n) += mlp_out;
        return attention;
    }
    x += attention.output;
    if (cross != nullptr) {
        cross->trace = attention_forward(block.cross_attention, norm_forward(block.cross_attention_norm, x),
                                         *cross->memory, cross->options);
        x += cross->trace.output;
    }
    auto rows = x.topRows(n);
    Matrix mlp_out = mlp_forward(block.mlp, norm_forward(block.mlp_norm, rows));
    if (has_norm(block.mlp_output_norm)) mlp_out = norm_forward(block.mlp_output_norm, mlp_out);
    if (block.mlp_output_scale.size() != 0) mlp_out.array().rowwise() *= block.mlp_output_scale.transpose().array();
    rows += mlp_out;
    return attention;
}

}   // namespace

AttentionTrace block_forward(const BlockSpec& spec, const Block& block, Matrix& x, const AttentionOptions& options,
                             Eigen::Index mlp_rows, const KeptPositions& after, CrossAttentionStep* cross) {
    const Matrix none;   // a whole run reads no kept keys or values
    const Matrix& keys = after.layer != nullptr ? after.layer->keys : none;
    const Matrix& values = after.layer != nullptr ? after.layer->values : none;
    return run_block(spec, block, x, mlp_rows, cross, [&](const Matrix& input) {
        return attention_forward_after(block.attention, input, keys, values, after.p, options);
    });
}

}   // namespace headscope
