#include "core/nn/layers.h"

#include "core/tensor/parallel.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>

namespace headscope {

void activate_inplace(MatrixRef x, Activation activation) {
    switch (activation) {
    case Activation::gelu:
        // Eigen's vectorised erf (SpecialFunctions): the MLP's largest elementwise cost.
        for_each_row_range(x, [](auto v) {
            constexpr float inverse_sqrt2 = 0.70710678118654752440f;
            v = 0.5f * v * (1.0f + (v * inverse_sqrt2).erf());
        });
        break;
    case Activation::gelu_tanh:
        // PyTorch's gelu(approximate="tanh"): 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        for_each_row_range(x, [](auto v) {
            constexpr float sqrt_2_over_pi = 0.79788456080286535588f;
            v = 0.5f * v * (1.0f + (sqrt_2_over_pi * (v + 0.044715f * v.cube())).tanh());
        });
        break;
    case Activation::quick_gelu: for_each_row_range(x, [](auto v) { v = v / (1.0f + (-1.702f * v).exp()); }); break;
    case Activation::relu: x = x.cwiseMax(0.0f); break;
    case Activation::silu: for_each_row_range(x, [](auto v) { v = v / (1.0f + (-v).exp()); }); break;
    }
}

namespace {

// Rows of x at a time past this many: each row's MLP is its own, and the [T, I] hidden
// activations are the largest transient of a long run (Llama-3.2-1B at T = 4,096: 134 MB,
// twice over for a gated MLP). A product's values do not depend on how many rows it
// has, so the chunks give what the whole would.
constexpr Eigen::Index mlp_chunk_rows = 1024;

Matrix mlp_rows(const Mlp& mlp, const ConstMatrixRef& x) {
    if (!mlp.gated()) {
        Matrix hidden = linear_forward(mlp.up, x);   // [T, I]
        activate_inplace(hidden, mlp.activation);
        return linear_forward(mlp.down, hidden);
    }
    Matrix gate = linear_forward(mlp.gate, x);   // [T, I]
    activate_inplace(gate, mlp.activation);
    gate.array() *= linear_forward(mlp.up, x).array();
    return linear_forward(mlp.down, gate);
}

}   // namespace

Matrix mlp_forward(const Mlp& mlp, const ConstMatrixRef& x) {
    if (x.rows() <= mlp_chunk_rows) return mlp_rows(mlp, x);
    Matrix out(x.rows(), mlp.down.weight.rows());
    for (Eigen::Index first = 0; first < x.rows(); first += mlp_chunk_rows) {
        const Eigen::Index n = std::min(mlp_chunk_rows, x.rows() - first);
        out.middleRows(first, n) = mlp_rows(mlp, x.middleRows(first, n));
    }
    return out;
}

}   // namespace headscope
