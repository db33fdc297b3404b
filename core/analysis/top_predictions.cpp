#include "core/analysis/top_predictions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headscope {

namespace {

// The row's max and the softmax denominator sum_i exp(row_i - max), summed in double;
// sum 0 when the row has no softmax. A sigmoid's needs neither.
struct Normaliser {
    LabelScore score = LabelScore::softmax;
    float max = -std::numeric_limits<float>::infinity();
    double sum = 0.0;
    bool valid() const { return sum > 0.0; }
    float probability(float logit) const {
        if (score == LabelScore::sigmoid)
            return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logit))));
        return static_cast<float>(std::exp(static_cast<double>(logit) - static_cast<double>(max)) / sum);
    }
};

Normaliser normaliser_of(std::span<const float> row, LabelScore score) {
    if (score == LabelScore::sigmoid) {
        const bool any_nan = std::any_of(row.begin(), row.end(), [](float v) { return std::isnan(v); });
        Normaliser n;
        n.score = score;
        n.sum = row.empty() || any_nan ? 0.0 : 1.0;
        return n;
    }
    Normaliser n;
    for (const float v : row) {
        // NaN or +inf: no probabilities to report (a model that overflowed).
        if (std::isnan(v) || v == std::numeric_limits<float>::infinity()) return {};
        if (v > n.max) n.max = v;
    }
    if (row.empty() || n.max == -std::numeric_limits<float>::infinity()) return {};
    // Subtracting the max keeps exp() from overflowing; the largest term is exp(0) = 1,
    // so the sum is at least 1.
    for (const float v : row) n.sum += std::exp(static_cast<double>(v) - static_cast<double>(n.max));
    return n;
}

}   // namespace

std::span<const float> logits_row(const Matrix& logits, Eigen::Index row) {
    return {logits.data() + row * logits.cols(), static_cast<std::size_t>(logits.cols())};
}

std::vector<Prediction> top_predictions(std::span<const float> row, int k, LabelScore score) {
    std::vector<Prediction> best;
    const Normaliser norm = normaliser_of(row, score);
    if (k <= 0 || !norm.valid()) return best;
    const auto n_best = static_cast<std::size_t>(k);
    best.reserve(n_best + 1);
    // One pass keeping the k best sorted. Columns come in increasing order, so a column
    // goes after every kept entry with an equal logit: ties stay in column order.
    for (std::size_t i = 0; i < row.size(); ++i) {
        const float v = row[i];
        if (best.size() == n_best && !(v > best.back().logit)) continue;
        std::size_t at = best.size();
        while (at > 0 && v > best[at - 1].logit) --at;
        best.insert(best.begin() + static_cast<std::ptrdiff_t>(at), Prediction{static_cast<Eigen::Index>(i), v, 0.0f});
        if (best.size() > n_best) best.pop_back();
    }
    for (Prediction& p : best) p.probability = norm.probability(p.logit);
    return best;
}

std::vector<float> probabilities_at(std::span<const float> row, std::span<const Eigen::Index> indices,
                                    LabelScore score) {
    const Normaliser norm = normaliser_of(row, score);
    std::vector<float> out;
    out.reserve(indices.size());
    for (const Eigen::Index i : indices) {
        const bool inside = i >= 0 && static_cast<std::size_t>(i) < row.size();
        out.push_back(norm.valid() && inside ? norm.probability(row[static_cast<std::size_t>(i)])
                                             : std::numeric_limits<float>::quiet_NaN());
    }
    return out;
}

}   // namespace headscope
