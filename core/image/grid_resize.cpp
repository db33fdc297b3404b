#include "core/image/grid_resize.h"

#include "core/base/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace headscope {

namespace {

// The four taps of one output coordinate and their weights.
struct CubicTaps {
    std::array<int, 4> index{};
    std::array<float, 4> weight{};
};

std::vector<CubicTaps> cubic_taps(int in_size, int out_size) {
    constexpr float A = -0.75f;
    const auto near = [](float t) { return ((A + 2.0f) * t - (A + 3.0f)) * t * t + 1.0f; };        // |t| <= 1
    const auto far = [](float t) { return ((A * t - 5.0f * A) * t + 8.0f * A) * t - 4.0f * A; };   // 1 < |t| < 2
    const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
    std::vector<CubicTaps> taps(static_cast<std::size_t>(out_size));
    for (int o = 0; o < out_size; ++o) {
        const float source = scale * (static_cast<float>(o) + 0.5f) - 0.5f;
        const float first = std::floor(source);
        const float t = source - first;
        CubicTaps& tap = taps[static_cast<std::size_t>(o)];
        tap.weight = {far(t + 1.0f), near(t), near(1.0f - t), far(2.0f - t)};
        for (int j = 0; j < 4; ++j) {
            tap.index[static_cast<std::size_t>(j)] = std::clamp(static_cast<int>(first) - 1 + j, 0, in_size - 1);
        }
    }
    return taps;
}

// One output cell of an antialiased pass: the first source cell and each one's weight.
struct FilterTaps {
    int first = 0;
    std::vector<float> weight;
};

// PyTorch's _compute_indices_min_size_weights_aa (from Pillow's precompute_coeffs), in float.
std::vector<FilterTaps> antialiased_taps(int in_size, int out_size) {
    constexpr float A = -0.5f;
    const auto filter = [](float x) {
        x = std::abs(x);
        if (x < 1.0f) return ((A + 2.0f) * x - (A + 3.0f)) * x * x + 1.0f;
        if (x < 2.0f) return ((A * x - 5.0f * A) * x + 8.0f * A) * x - 4.0f * A;
        return 0.0f;
    };
    const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
    const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
    const float inverse = scale >= 1.0f ? 1.0f / scale : 1.0f;
    const int widest = static_cast<int>(std::ceil(support)) * 2 + 1;
    std::vector<FilterTaps> taps(static_cast<std::size_t>(out_size));
    for (int o = 0; o < out_size; ++o) {
        const float centre = scale * (static_cast<float>(o) + 0.5f);
        const int first = std::max(static_cast<int>(centre - support + 0.5f), 0);
        const int size = std::clamp(std::min(static_cast<int>(centre + support + 0.5f), in_size) - first, 0, widest);
        FilterTaps& tap = taps[static_cast<std::size_t>(o)];
        tap.first = first;
        float total = 0.0f;
        for (int j = 0; j < size; ++j) {
            tap.weight.push_back(filter((static_cast<float>(j + first) - centre + 0.5f) * inverse));
            total += tap.weight.back();
        }
        if (total != 0.0f) {
            for (float& w : tap.weight) w /= total;
        }
    }
    return taps;
}

// One antialiased pass along the width (`along_width`) or the height of a [h * w, C] grid.
Matrix antialiased_pass(const ConstMatrixRef& grid, int h, int w, int out, bool along_width) {
    const std::vector<FilterTaps> taps = antialiased_taps(along_width ? w : h, out);
    const int out_h = along_width ? h : out;
    const int out_w = along_width ? out : w;
    Matrix result(static_cast<Eigen::Index>(out_h) * out_w, grid.cols());
    for (int y = 0; y < out_h; ++y) {
        for (int x = 0; x < out_w; ++x) {
            const FilterTaps& tap = taps[static_cast<std::size_t>(along_width ? x : y)];
            auto cell = result.row(static_cast<Eigen::Index>(y) * out_w + x);
            for (std::size_t j = 0; j < tap.weight.size(); ++j) {
                const int source = tap.first + static_cast<int>(j);
                const Eigen::Index row =
                    along_width ? static_cast<Eigen::Index>(y) * w + source : static_cast<Eigen::Index>(source) * w + x;
                if (j == 0) {
                    cell = tap.weight[j] * grid.row(row);
                } else {
                    cell += tap.weight[j] * grid.row(row);
                }
            }
            if (tap.weight.empty()) cell.setZero();
        }
    }
    return result;
}

void check_grid(const ConstMatrixRef& grid, int in_h, int in_w, int out_h, int out_w) {
    if (in_h < 1 || in_w < 1 || out_h < 1 || out_w < 1 || grid.rows() != static_cast<Eigen::Index>(in_h) * in_w) {
        throw Error("grid resize: a " + std::to_string(grid.rows()) + "-cell grid is not " + std::to_string(in_h) +
                    " x " + std::to_string(in_w) + ", or a size is below 1 (to " + std::to_string(out_h) + " x " +
                    std::to_string(out_w) + ")");
    }
}

}   // namespace

Matrix resize_grid_bicubic_antialiased(const ConstMatrixRef& grid, int in_h, int in_w, int out_h, int out_w) {
    check_grid(grid, in_h, in_w, out_h, out_w);
    Matrix result = grid;
    if (out_w != in_w) result = antialiased_pass(result, in_h, in_w, out_w, true);
    if (out_h != in_h) result = antialiased_pass(result, in_h, out_w, out_h, false);
    return result;
}

Matrix resize_grid_bicubic(const ConstMatrixRef& grid, int in_h, int in_w, int out_h, int out_w) {
    check_grid(grid, in_h, in_w, out_h, out_w);
    const std::vector<CubicTaps> rows = cubic_taps(in_h, out_h);
    const std::vector<CubicTaps> cols = cubic_taps(in_w, out_w);
    Matrix out = Matrix::Zero(static_cast<Eigen::Index>(out_h) * out_w, grid.cols());
    for (int y = 0; y < out_h; ++y) {
        const CubicTaps& ty = rows[static_cast<std::size_t>(y)];
        for (int x = 0; x < out_w; ++x) {
            const CubicTaps& tx = cols[static_cast<std::size_t>(x)];
            auto cell = out.row(static_cast<Eigen::Index>(y) * out_w + x);
            for (std::size_t i = 0; i < 4; ++i) {
                for (std::size_t j = 0; j < 4; ++j) {
                    const Eigen::Index source = static_cast<Eigen::Index>(ty.index[i]) * in_w + tx.index[j];
                    cell += (ty.weight[i] * tx.weight[j]) * grid.row(source);
                }
            }
        }
    }
    return out;
}

}   // namespace headscope
