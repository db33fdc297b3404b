#pragma once
// The matrix products of a forward pass, in one place: c = alpha * a * op(b) on row-major
// blocks, written over c. With OpenBLAS (HEADSCOPE_OPENBLAS, the default) this is one
// sgemm with beta = 0 (or 1 onto a bias): faster here than Eigen's GEMM (docs/benchmarks.md), and unlike
// Eigen's product into a block it neither clears c first nor reads it back. Without, it
// is Eigen's product. The caller splits work between threads (core/parallel.h).

#include "core/matrix.h"

namespace headscope {

enum class Transpose { no, yes };

// What the product does with c's old values: `overwrite` ignores them; `accumulate` adds
// to them, which is how a bias is applied: c is filled with the bias rows first, and the
// product adds onto them in the same pass (no separate clearing of c, no second pass).
enum class Output { overwrite, accumulate };

// c [m, n] (+)= alpha * a [m, k] * b [k, n]   (b_op = no), or
// c [m, n] (+)= alpha * a [m, k] * b^T        (b_op = yes, b is [n, k]).
void gemm(float alpha, const ConstMatrixRef& a, const ConstMatrixRef& b, Transpose b_op, MatrixRef c,
          Output output = Output::overwrite);

} // namespace headscope
