#include "core/analysis/head_summary.h"

#include "core/base/error.h"

#include <algorithm>
#include <string>
#include <vector>

namespace headscope {

namespace {

// Where pooled cell c of n cells over `length` starts: c * length / n (integer), so the
// cells' sizes differ by at most one and every row or column lands in exactly one.
Eigen::Index cell_start(Eigen::Index c, Eigen::Index n, Eigen::Index length) { return c * length / n; }

}   // namespace

HeadSummary summarize_head(const Matrix& map, const Mask* allowed, const MetricContext& context, int layer, int head,
                           Eigen::Index side) {
    if (side < 1) throw Error("head summary: the thumbnail's side must be at least 1, got " + std::to_string(side));
    HeadSummary summary;
    summary.metrics = compute_head_metrics(map, allowed, context);
    summary.metrics.layer = layer;
    summary.metrics.head = head;
    const Eigen::Index rows = std::min(side, map.rows());
    const Eigen::Index cols = std::min(side, map.cols());
    summary.pooled_max.setZero(rows, cols);
    summary.pooled_mean.setZero(rows, cols);
    // Each cell's column block, found once.
    std::vector<Eigen::Index> col_of(static_cast<std::size_t>(map.cols()));
    for (Eigen::Index c = 0; c < cols; ++c) {
        for (Eigen::Index j = cell_start(c, cols, map.cols()); j < cell_start(c + 1, cols, map.cols()); ++j) {
            col_of[static_cast<std::size_t>(j)] = c;
        }
    }
    for (Eigen::Index r = 0; r < rows; ++r) {
        const Eigen::Index first = cell_start(r, rows, map.rows());
        const Eigen::Index last = cell_start(r + 1, rows, map.rows());
        auto max_row = summary.pooled_max.row(r);
        auto sum_row = summary.pooled_mean.row(r);
        for (Eigen::Index i = first; i < last; ++i) {
            const float* values = map.row(i).data();
            for (Eigen::Index j = 0; j < map.cols(); ++j) {
                const Eigen::Index c = col_of[static_cast<std::size_t>(j)];
                max_row(c) = std::max(max_row(c), values[j]);
                sum_row(c) += values[j];
            }
        }
        for (Eigen::Index c = 0; c < cols; ++c) {
            const auto cells = static_cast<float>(
                (last - first) * (cell_start(c + 1, cols, map.cols()) - cell_start(c, cols, map.cols())));
            sum_row(c) /= cells;
        }
    }
    return summary;
}

}   // namespace headscope
