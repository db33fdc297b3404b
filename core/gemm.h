#pragma once
// The matrix products of a forward pass, in one place: c = alpha * a * op(b) on row-major
// blocks, written over c. With OpenBLAS (HEADSCOPE_OPENBLAS, the default) this is one
// sgemm with beta = 0: faster here than Eigen's GEMM (docs/benchmarks.md), and unlike
// Eigen's product into a block it neither clears c first nor reads it back. Without, it
// is Eigen's product. The caller splits work between threads (core/parallel.h).

#include "core/matrix.h"

namespace headscope {

enum class Transpose { no, yes };

// c [m, n] = alpha * a [m, k] * b [k, n]   (b_op = no), or
// c [m, n] = alpha * a [m, k] * b^T        (b_op = yes, b is [n, k]).
void gemm(float alpha, const ConstMatrixRef& a, const ConstMatrixRef& b, Transpose b_op, MatrixRef c);

} // namespace headscope
