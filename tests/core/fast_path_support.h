#pragma once
// References the fast paths are checked against: products and softmax in double
// precision, seeded random attention layers, and the thread count restored after a test.

#include "core/base/error.h"
#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "core/tensor/kernels/exp_sum.h"
#include "core/tensor/kernels/weight_panels.h"
#include "core/tensor/parallel.h"
#include "core/tensor/weight_matrix.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace headscope::test {

using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline double max_diff(const ConstMatrixRef& got, const MatrixD& want) {
    REQUIRE(got.rows() == want.rows());
    REQUIRE(got.cols() == want.cols());
    return (got.cast<double>() - want).cwiseAbs().maxCoeff();
}

// One self-attention layer of width E with H heads: seeded random weights (`scale`) and
// biases (0.1), as separate q, k, v and out projections.
inline AttentionWeights random_attention(Eigen::Index H, Eigen::Index E, float scale, std::mt19937& rng) {
    AttentionWeights w;
    w.n_heads = H;
    for (Linear* l : {&w.q, &w.k, &w.v, &w.out}) {
        l->weight = random_matrix(E, E, rng, scale);
        l->bias = random_matrix(E, 1, rng, 0.1f);
    }
    return w;
}

// softmax over the allowed keys of each row, in double; a row with none is all 0.
inline MatrixD reference_softmax(const Matrix& scores, const Mask& allowed) {
    MatrixD out = MatrixD::Zero(scores.rows(), scores.cols());
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (Eigen::Index j = 0; j < scores.cols(); ++j) {
            if (allowed(i, j)) max = std::max(max, static_cast<double>(scores(i, j)));
        }
        if (std::isinf(max)) continue;
        double sum = 0.0;
        for (Eigen::Index j = 0; j < scores.cols(); ++j) {
            if (allowed(i, j)) sum += std::exp(scores(i, j) - max);
        }
        for (Eigen::Index j = 0; j < scores.cols(); ++j) {
            if (allowed(i, j)) out(i, j) = std::exp(scores(i, j) - max) / sum;
        }
    }
    return out;
}

// Restores the thread count a test changed.
struct ThreadCount {
    int saved = compute_threads();
    ~ThreadCount() { set_compute_threads(saved); }
};

}   // namespace headscope::test
