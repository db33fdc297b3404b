#include "core/gemm.h"

#ifdef HEADSCOPE_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <algorithm>

namespace headscope {

void gemm(float alpha, const ConstMatrixRef& a, const ConstMatrixRef& b, Transpose b_op, MatrixRef c, Output output) {
    const Eigen::Index m = c.rows();
    const Eigen::Index n = c.cols();
    const Eigen::Index k = a.cols();
    eigen_assert(a.rows() == m && (b_op == Transpose::yes ? b.rows() == n && b.cols() == k : b.rows() == k && b.cols() == n));
    if (m == 0 || n == 0) return;
    const bool accumulate = output == Output::accumulate;
    if (k == 0) {
        if (!accumulate) c.setZero();
        return;
    }
#ifdef HEADSCOPE_HAVE_OPENBLAS
    // OpenBLAS computes on the calling thread only: the callers are the threads
    // (core/parallel.h), and its own on top of them would oversubscribe the cores.
    static const bool one_thread_each = [] {
        openblas_set_num_threads(1);
        return true;
    }();
    (void)one_thread_each;
    // A one-row block may report any outer stride; BLAS wants at least the row's length.
    const auto stride = [](const auto& x) { return static_cast<blasint>(std::max(x.outerStride(), x.cols())); };
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_op == Transpose::yes ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a.data(), stride(a),
                b.data(), stride(b), accumulate ? 1.0f : 0.0f, c.data(), stride(c));
#else
    if (accumulate) {
        if (b_op == Transpose::yes) {
            c.noalias() += alpha * (a * b.transpose());
        } else {
            c.noalias() += alpha * (a * b);
        }
    } else if (b_op == Transpose::yes) {
        c.noalias() = alpha * (a * b.transpose());
    } else {
        c.noalias() = alpha * (a * b);
    }
#endif
}

} // namespace headscope
