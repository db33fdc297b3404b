#include "core/head_compare.h"

#include "core/error.h"

#include <cmath>
#include <string>

namespace headscope {

namespace {

// sum p log2(p / m), with 0 log 0 = 0.
double kl_bits(const Eigen::Ref<const RowVector>& p, const Eigen::Ref<const RowVector>& m) {
    double total = 0.0;
    for (Eigen::Index j = 0; j < p.size(); ++j) {
        if (p(j) > 0.0f) total += static_cast<double>(p(j)) * std::log2(static_cast<double>(p(j)) / static_cast<double>(m(j)));
    }
    return total;
}

} // namespace

HeadComparison compare_heads(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) {
        throw Error("compare: maps of different shapes [" + std::to_string(a.rows()) + ", " + std::to_string(a.cols()) +
                    "] and [" + std::to_string(b.rows()) + ", " + std::to_string(b.cols()) + "]");
    }
    HeadComparison result;
    if (a.size() == 0) return result;
    result.max_abs_difference = static_cast<double>((a - b).cwiseAbs().maxCoeff());
    double total = 0.0;
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
        if (a.row(i).sum() <= 0.0f && b.row(i).sum() <= 0.0f) continue;   // fully masked in both
        const RowVector m = 0.5f * (a.row(i) + b.row(i));
        total += 0.5 * kl_bits(a.row(i), m) + 0.5 * kl_bits(b.row(i), m);
        ++result.rows_compared;
    }
    if (result.rows_compared > 0) result.mean_js_divergence = total / result.rows_compared;
    return result;
}

} // namespace headscope
