#pragma once
// The matrix types of core/, declared once. Activations are row-major [T, C]
// (tokens are rows); linear weights keep PyTorch's [out, in], so y = x * W^T + b.

#include <Eigen/Core>

namespace headscope {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::Matrix<float, Eigen::Dynamic, 1>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;

using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;
using MatrixRef = Eigen::Ref<Matrix>;
using ConstMatrixRef = Eigen::Ref<const Matrix>;

}   // namespace headscope
