#include "ui/widgets/heatmap_pyramid.h"

#include "core/tensor/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace headscope::ui {

namespace {

// A cell's work in parallel_ranges' units, about, where the levels may use every core: a
// 1,000 x 1,000 map's are then made on all of them, a thumbnail's on one.
double cell_work(LevelThreads threads) { return threads == LevelThreads::every_core ? 10.0 : 0.0; }

// Each texel the value of its footprint with the greatest rank(value).
template <typename Rank>
Matrix pool_by(const Matrix& values, Rank rank, LevelThreads threads = LevelThreads::calling) {
    const auto rows = static_cast<int>(values.rows());
    const auto cols = static_cast<int>(values.cols());
    const int next_rows = mip_next_size(rows);
    const int next_cols = mip_next_size(cols);
    Matrix out(next_rows, next_cols);
    // The columns' footprints once, not once per row (two divisions per texel otherwise).
    std::vector<MipFootprint> column_footprints(static_cast<std::size_t>(next_cols));
    for (int j = 0; j < next_cols; ++j)
        column_footprints[static_cast<std::size_t>(j)] = mip_footprint(j, cols, next_cols);
    parallel_ranges(next_rows, cell_work(threads) * static_cast<double>(values.size()),
                    [&](Eigen::Index first, Eigen::Index last) {
                        for (auto i = static_cast<int>(first); i < static_cast<int>(last); ++i) {
                            const MipFootprint r = mip_footprint(i, rows, next_rows);
                            for (int j = 0; j < next_cols; ++j) {
                                const MipFootprint c = column_footprints[static_cast<std::size_t>(j)];
                                float best = values(r.first, c.first);
                                float best_rank = rank(best);
                                for (int y = r.first; y <= r.last; ++y) {
                                    for (int x = c.first; x <= c.last; ++x) {
                                        const float v = values(y, x);
                                        const float k = rank(v);
                                        if (k > best_rank) {
                                            best = v;
                                            best_rank = k;
                                        }
                                    }
                                }
                                out(i, j) = best;
                            }
                        }
                    });
    return out;
}

// Function objects, not functions: pool_by is then made for each, with its rank inlined.
constexpr auto rank_sequential = [](float v) { return v; };

// coolwarm: 0.5 is "no difference"; both ends are strong. The sentinels keep their order.
constexpr auto rank_diverging = [](float v) { return std::isinf(v) ? v : std::abs(v - 0.5f); };

RgbaImage blank_image(Eigen::Index rows, Eigen::Index cols) {
    RgbaImage image;
    image.width = static_cast<int>(cols);
    image.height = static_cast<int>(rows);
    image.pixels.resize(static_cast<std::size_t>(rows * cols) * 4);
    return image;
}

// Rows [first, last) of `values` into `image`'s pixels: the sentinels as their marks.
void colour_rows(const Matrix& values, Eigen::Index first, Eigen::Index last, Colormap map, RgbaImage& image) {
    const auto begin = static_cast<std::size_t>(first * values.cols());
    const std::span<const float> cells(values.data() + begin, static_cast<std::size_t>((last - first) * values.cols()));
    colormap_lookup_marked(map, cells, image.pixels.data() + 4 * begin);
}

RgbaImage colour(const Matrix& values, Colormap map, LevelThreads threads) {
    RgbaImage image = blank_image(values.rows(), values.cols());
    parallel_ranges(values.rows(), cell_work(threads) * static_cast<double>(values.size()),
                    [&](Eigen::Index first, Eigen::Index last) { colour_rows(values, first, last, map, image); });
    return image;
}

}   // namespace

int mip_next_size(int size) { return std::max(1, size / 2); }

MipFootprint mip_footprint(int i, int n, int n_next) {
    // Texel i spans [i, i + 1) * n / n_next source texels: every source texel that
    // area touches. 64-bit: n up to a few thousand squared is far from overflow anyway.
    const long long first = static_cast<long long>(i) * n / n_next;
    const long long end = (static_cast<long long>(i + 1) * n + n_next - 1) / n_next;
    return {static_cast<int>(first), static_cast<int>(end - 1)};
}

Matrix mip_max_pool(const Matrix& values) { return pool_by(values, rank_sequential); }

MipLevels heatmap_mip_levels(const Matrix& weights, const Mask* allowed, Colormap map, float scale_max,
                             LevelThreads threads) {
    // What heatmap_image draws, as one float per cell (heatmap_marked_row): the
    // colour-map position in [0, 1], or a mark for the two special colours.
    Matrix values(weights.rows(), weights.cols());
    MipLevels levels;
    levels.push_back(blank_image(weights.rows(), weights.cols()));
    if (values.size() == 0) return levels;
    // Level 0 coloured a row at a time as its values are made, while they are in cache.
    parallel_ranges(weights.rows(), cell_work(threads) * static_cast<double>(weights.size()),
                    [&](Eigen::Index first, Eigen::Index last) {
                        for (Eigen::Index i = first; i < last; ++i) {
                            heatmap_marked_row(weights, allowed, scale_max, i, values.row(i).data());
                            colour_rows(values, i, i + 1, map, levels.front());
                        }
                    });
    const bool diverging = map == Colormap::coolwarm;
    while (values.rows() > 1 || values.cols() > 1) {
        values = diverging ? pool_by(values, rank_diverging, threads) : pool_by(values, rank_sequential, threads);
        levels.push_back(colour(values, map, threads));
    }
    return levels;
}

Matrix centre_signed(const Matrix& values, float least_bound) {
    float bound = 0.0f;
    for (Eigen::Index i = 0; i < values.size(); ++i) {
        if (std::isfinite(values.data()[i])) bound = std::max(bound, std::abs(values.data()[i]));
    }
    bound = std::max({bound, least_bound, 1e-12f});
    return values.unaryExpr([bound](float v) { return std::isfinite(v) ? 0.5f + 0.5f * v / bound : v; });
}

}   // namespace headscope::ui
