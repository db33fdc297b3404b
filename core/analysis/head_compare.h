#pragma once
// Numbers for comparing two attention maps of the same shape (two heads, or one head
// with and without a mask): how far apart they are, cell by cell and as distributions.

#include "core/tensor/matrix.h"

#include <Eigen/Core>

#include <vector>

namespace headscope {

struct HeadComparison {
    double max_abs_difference = 0.0;   // max over cells of |a - b|
    double mean_js_divergence = 0.0;   // Jensen-Shannon divergence per query row, in bits (0..1), averaged
    int rows_compared = 0;             // rows where either map has any weight
};

// a, b: [Tq, Tk] rows of attention weights (each row sums to 1, or is all 0 where
// fully masked; such rows in both maps are skipped). Throws on a shape mismatch.
HeadComparison compare_heads(const Matrix& a, const Matrix& b);

// The Jensen-Shannon divergence in its entropy form, JS(P, Q) = H(M) - (H(P) + H(Q)) / 2
// with M = (P + Q) / 2: the same number as (KL(P||M) + KL(Q||M)) / 2, but the terms
// that depend on one map only are computed once per map, so comparing every pair of
// N heads (core/analysis/head_similarity.h) costs one pass over each pair's cells instead of two
// with a division and two logs per cell. compare_heads() is built on the same two
// functions. The per-cell terms are summed in float (Eigen vectorises the float log, not
// the double one): a JS value is good to about 1e-6 bits, and JS(P, P) is exactly 0.
struct RowEntropies {
    Eigen::VectorXd sum_p_ln_p;     // [Tq] sum_j p_ij ln p_ij (minus the row's entropy in nats; 0 ln 0 = 0)
    std::vector<bool> has_weight;   // [Tq] the row sums to more than 0
};
RowEntropies row_entropies(const Matrix& map);

struct MeanJs {
    double bits = 0.0;   // mean over the rows compared; 0 when none
    int rows = 0;        // rows where either map has any weight
};
// a, b: the same shape (not checked here); ea, eb: their row_entropies().
MeanJs mean_js_divergence(const Matrix& a, const RowEntropies& ea, const Matrix& b, const RowEntropies& eb);

}   // namespace headscope
