#include "core/layers.h"

#include "core/parallel.h"

#include <unsupported/Eigen/SpecialFunctions>

#include <cmath>

namespace headscope {

Matrix layer_norm_forward(const LayerNorm& norm, const ConstMatrixRef& x) {
    Matrix y(x.rows(), x.cols());
    const float inverse_count = 1.0f / static_cast<float>(x.cols());
    const auto gamma = norm.weight.transpose().array();
    const auto beta = norm.bias.transpose().array();
    const double flops = 8.0 * static_cast<double>(x.size());
    parallel_ranges(x.rows(), flops, [&](Eigen::Index first, Eigen::Index last) {
        for (Eigen::Index t = first; t < last; ++t) {
            const auto row = x.row(t).array();
            const float mean = row.sum() * inverse_count;
            const float variance = (row - mean).square().sum() * inverse_count;
            const float scale = 1.0f / std::sqrt(variance + norm.eps);
            y.row(t).array() = (row - mean) * scale * gamma + beta;
        }
    });
    return y;
}

void gelu_inplace(MatrixRef x) {
    // Eigen's vectorised erf (SpecialFunctions): the MLP's largest elementwise cost.
    for_each_row_range(x, [](auto rows) {
        constexpr float inverse_sqrt2 = 0.70710678118654752440f;
        rows = 0.5f * rows * (1.0f + (rows * inverse_sqrt2).erf());
    });
}

Matrix mlp_forward(const Mlp& mlp, const ConstMatrixRef& x) {
    Matrix hidden = linear_forward(mlp.fc1, x);
    gelu_inplace(hidden);
    return linear_forward(mlp.fc2, hidden);
}

}   // namespace headscope
