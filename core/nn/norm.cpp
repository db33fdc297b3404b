#include "core/nn/norm.h"

#include "core/tensor/parallel.h"

#include <cmath>

namespace headscope {

Matrix norm_forward(const Norm& norm, const ConstMatrixRef& x) {
    Matrix y(x.rows(), x.cols());
    const float inverse_count = 1.0f / static_cast<float>(x.cols());
    const bool plus_one = norm.kind == NormKind::rms_norm_plus_one;
    const RowVector gamma = plus_one ? RowVector((norm.weight.array() + 1.0f).transpose()) : norm.weight.transpose();
    const bool shift = norm.bias.size() != 0;
    const double flops = 8.0 * static_cast<double>(x.size());
    parallel_ranges(x.rows(), flops, [&](Eigen::Index first, Eigen::Index last) {
        for (Eigen::Index t = first; t < last; ++t) {
            const auto row = x.row(t).array();
            if (norm.kind == NormKind::layer_norm) {
                const float mean = row.sum() * inverse_count;
                const float variance = (row - mean).square().sum() * inverse_count;
                const float scale = 1.0f / std::sqrt(variance + norm.eps);
                y.row(t).array() = (row - mean) * scale * gamma.array();
            } else {
                const float scale = 1.0f / std::sqrt(row.square().sum() * inverse_count + norm.eps);
                y.row(t).array() = row * scale * gamma.array();
            }
            if (shift) y.row(t) += norm.bias.transpose();
        }
    });
    return y;
}

}   // namespace headscope
