#include "core/layers.h"

#include <cmath>

namespace headscope {

Matrix layer_norm_forward(const LayerNorm& norm, const ConstMatrixRef& x) {
    Matrix y(x.rows(), x.cols());
    const float inverse_count = 1.0f / static_cast<float>(x.cols());
    for (Eigen::Index t = 0; t < x.rows(); ++t) {
        const auto row = x.row(t).array();
        const float mean = row.sum() * inverse_count;
        const float variance = (row - mean).square().sum() * inverse_count;
        const float scale = 1.0f / std::sqrt(variance + norm.eps);
        y.row(t).array() = (row - mean) * scale * norm.weight.transpose().array() + norm.bias.transpose().array();
    }
    return y;
}

void gelu_inplace(MatrixRef x) {
    constexpr float inverse_sqrt2 = 0.70710678118654752440f;
    x = x.unaryExpr([](float v) { return 0.5f * v * (1.0f + std::erf(v * inverse_sqrt2)); });
}

Matrix mlp_forward(const Mlp& mlp, const ConstMatrixRef& x) {
    Matrix hidden = linear_forward(mlp.fc1, x);
    gelu_inplace(hidden);
    return linear_forward(mlp.fc2, hidden);
}

} // namespace headscope
