#pragma once
// The MLP of a transformer block and its activations, on row-major [T, C] activations,
// with PyTorch's definitions (core/nn/norm.h has the norms).

#include "core/nn/attention.h"
#include "core/nn/norm.h"
#include "core/tensor/matrix.h"
#include "core/tensor/parallel.h"

namespace headscope {

enum class Activation {
    gelu,         // x * Phi(x), the exact erf form (nn.GELU())
    gelu_tanh,    // the tanh approximation (GPT-2's "gelu_new", "gelu_pytorch_tanh")
    quick_gelu,   // x * sigmoid(1.702 x) (CLIP)
    relu,
    silu,   // x * sigmoid(x) ("silu", "swish"; SwiGLU's gate)
};

// The activation, in place.
void activate_inplace(MatrixRef x, Activation activation);

// Applies `op` to x's rows in ranges, as arrays (`op(auto rows)` assigns to them), on
// the compute threads: for elementwise activations, which cost ~20 operations a value.
template <typename Op>
void for_each_row_range(MatrixRef x, Op&& op) {
    parallel_ranges(x.rows(), 20.0 * static_cast<double>(x.size()),
                    [&](Eigen::Index first, Eigen::Index last) { op(x.middleRows(first, last - first).array()); });
}

// Plain: down(act(up(x))). Gated (SwiGLU, GeGLU; `gate` present): down(act(gate(x)) * up(x)).
struct Mlp {
    Linear up;     // [I, E]  fc1, c_fc, intermediate.dense, up_proj
    Linear gate;   // [I, E]  gate_proj, or empty: not gated
    Linear down;   // [E, I]  fc2, c_proj, output.dense, down_proj
    Activation activation = Activation::gelu;

    bool gated() const { return gate.weight.size() != 0; }
};

// [T, E] -> [T, E]
Matrix mlp_forward(const Mlp& mlp, const ConstMatrixRef& x);

}   // namespace headscope
