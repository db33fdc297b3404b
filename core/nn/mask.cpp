#include "core/nn/mask.h"

#include "core/base/error.h"

#include <algorithm>
#include <string>

namespace headscope {

Mask mask_causal(Eigen::Index n_queries, Eigen::Index n_keys) {
    Mask mask(n_queries, n_keys);
    for (Eigen::Index i = 0; i < n_queries; ++i) {
        for (Eigen::Index j = 0; j < n_keys; ++j) mask(i, j) = j <= i;
    }
    return mask;
}

Mask mask_padding(Eigen::Index n_queries, std::span<const bool> key_is_valid) {
    const auto n_keys = static_cast<Eigen::Index>(key_is_valid.size());
    Mask mask(n_queries, n_keys);
    for (Eigen::Index i = 0; i < n_queries; ++i) {
        for (Eigen::Index j = 0; j < n_keys; ++j) mask(i, j) = key_is_valid[static_cast<std::size_t>(j)];
    }
    return mask;
}

Mask mask_sliding_window(Eigen::Index T, Eigen::Index window) {
    if (window < 1) throw Error("sliding window: expected at least 1 position, got " + std::to_string(window));
    Mask allowed = Mask::Constant(T, T, false);
    for (Eigen::Index t = 0; t < T; ++t) {
        const Eigen::Index first = std::max<Eigen::Index>(0, t - window + 1);
        allowed.row(t).segment(first, t - first + 1).setConstant(true);
    }
    return allowed;
}

OptionalMask mask_and(const OptionalMask& a, const OptionalMask& b) {
    if (!a) return b;
    if (!b) return a;
    if (a->rows() != b->rows() || a->cols() != b->cols()) {
        throw Error("masks of different shapes cannot be combined: [" + std::to_string(a->rows()) + ", " +
                    std::to_string(a->cols()) + "] and [" + std::to_string(b->rows()) + ", " +
                    std::to_string(b->cols()) + "]");
    }
    return Mask(*a && *b);
}

bool masks_agree(const Mask& a, const Mask& b, Eigen::Index rows, Eigen::Index cols) {
    for (Eigen::Index i = 0; i < rows; ++i) {
        const bool* row_a = a.data() + i * a.cols();
        if (!std::equal(row_a, row_a + cols, b.data() + i * b.cols())) return false;
    }
    return true;
}

bool mask_allows_any(const Mask& mask, Eigen::Index first_row, Eigen::Index rows, Eigen::Index first_col,
                     Eigen::Index cols) {
    for (Eigen::Index i = first_row; i < first_row + rows; ++i) {
        const bool* row = mask.data() + i * mask.cols() + first_col;
        if (std::find(row, row + cols, true) != row + cols) return true;
    }
    return false;
}

}   // namespace headscope
