#include "ui/widgets/heatmap_pyramid.h"

#include "core/tensor/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

namespace headscope::ui {

namespace {

constexpr float loudest = std::numeric_limits<float>::infinity();   // not finite: always shown
constexpr float quietest = -loudest;                                // masked: shown only alone

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
    parallel_ranges(next_rows, cell_work(threads) * static_cast<double>(values.size()),
                    [&](Eigen::Index first, Eigen::Index last) {
                        for (auto i = static_cast<int>(first); i < static_cast<int>(last); ++i) {
                            const MipFootprint r = mip_footprint(i, rows, next_rows);
                            for (int j = 0; j < next_cols; ++j) {
                                const MipFootprint c = mip_footprint(j, cols, next_cols);
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

RgbaImage colour(const Matrix& values, Colormap map, LevelThreads threads) {
    RgbaImage image;
    image.width = static_cast<int>(values.cols());
    image.height = static_cast<int>(values.rows());
    image.pixels.resize(static_cast<std::size_t>(values.size()) * 4);
    // Each range of rows: its cells through the colour map in one pass, then the few
    // sentinels painted over.
    const auto width = static_cast<std::size_t>(values.cols());
    parallel_ranges(values.rows(), cell_work(threads) * static_cast<double>(values.size()),
                    [&](Eigen::Index first, Eigen::Index last) {
                        const auto begin = static_cast<std::size_t>(first) * width;
                        const std::span<const float> cells(values.data() + begin,
                                                           static_cast<std::size_t>(last - first) * width);
                        colormap_lookup_many(map, cells, image.pixels.data() + 4 * begin);
                        for (std::size_t k = 0; k < cells.size(); ++k) {
                            if (!std::isinf(cells[k])) continue;
                            const Rgba8 c = cells[k] == loudest ? not_finite_colour : masked_colour;
                            std::uint8_t* out = image.pixels.data() + 4 * (begin + k);
                            out[0] = c.r;
                            out[1] = c.g;
                            out[2] = c.b;
                            out[3] = c.a;
                        }
                    });
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
    // What heatmap_image draws, as one float per cell: the colour-map position in
    // [0, 1], or a sentinel for the two special colours (checked in its order: not
    // finite before masked).
    const float inverse = scale_max > 0.0f ? 1.0f / scale_max : 1.0f;
    Matrix values(weights.rows(), weights.cols());
    parallel_ranges(weights.rows(), cell_work(threads) * static_cast<double>(weights.size()),
                    [&](Eigen::Index first, Eigen::Index last) {
                        for (Eigen::Index i = first; i < last; ++i) {
                            for (Eigen::Index j = 0; j < weights.cols(); ++j) {
                                const float w = weights(i, j);
                                if (!std::isfinite(w)) {
                                    values(i, j) = loudest;
                                } else if (allowed && !(*allowed)(i, j)) {
                                    values(i, j) = quietest;
                                } else {
                                    values(i, j) = std::clamp(w * inverse, 0.0f, 1.0f);
                                }
                            }
                        }
                    });
    MipLevels levels;
    if (values.size() == 0) {
        levels.push_back(colour(values, map, threads));
        return levels;
    }
    const bool diverging = map == Colormap::coolwarm;
    for (;;) {
        levels.push_back(colour(values, map, threads));
        if (values.rows() == 1 && values.cols() == 1) break;
        values = diverging ? pool_by(values, rank_diverging, threads) : pool_by(values, rank_sequential, threads);
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
