#pragma once
// The layers around attention in a transformer block: LayerNorm, GELU and the MLP,
// on row-major [T, C] activations, with PyTorch's definitions.

#include "core/attention.h"
#include "core/matrix.h"
#include "core/parallel.h"

namespace headscope {

struct LayerNorm {
    Vector weight;       // [C] (gamma)
    Vector bias;         // [C] (beta)
    float eps = 1e-5f;   // PyTorch's default; GPT-2, BERT and ViT set their own
};

// Each row normalised over its C features (biased variance), then scaled and shifted.
Matrix layer_norm_forward(const LayerNorm& norm, const ConstMatrixRef& x);

// GELU with the exact erf form (nn.GELU() default), in place.
void gelu_inplace(MatrixRef x);

// Applies `op` to x's rows in ranges, as arrays (`op(auto rows)` assigns to them), on
// the compute threads: for elementwise activations, which cost ~20 operations a value.
template <typename Op>
void for_each_row_range(MatrixRef x, Op&& op) {
    parallel_ranges(x.rows(), 20.0 * static_cast<double>(x.size()),
                    [&](Eigen::Index first, Eigen::Index last) { op(x.middleRows(first, last - first).array()); });
}

struct Mlp {
    Linear fc1;   // [hidden, E]
    Linear fc2;   // [E, hidden]
};
// fc2(GELU(fc1(x))): [T, E] -> [T, E]
Matrix mlp_forward(const Mlp& mlp, const ConstMatrixRef& x);

}   // namespace headscope
