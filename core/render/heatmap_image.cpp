#include "core/render/heatmap_image.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headscope {

Rgba8 RgbaImage::at(int x, int y) const {
    const std::size_t i =
        (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 4;
    return {pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]};
}

void heatmap_marked_row(const Matrix& weights, const Mask* allowed, float scale_max, Eigen::Index row, float* out) {
    constexpr float infinity = std::numeric_limits<float>::infinity();
    const float inverse = scale_max > 0.0f ? 1.0f / scale_max : 1.0f;
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
        const float w = weights(row, j);
        if (!std::isfinite(w)) {
            out[j] = infinity;   // checked first: a not-finite weight shows even where masked
        } else if (allowed && !(*allowed)(row, j)) {
            out[j] = -infinity;
        } else {
            out[j] = std::clamp(w * inverse, 0.0f, 1.0f);
        }
    }
}

RgbaImage heatmap_image(const Matrix& weights, const Mask* allowed, Colormap map, float scale_max) {
    RgbaImage image;
    image.width = static_cast<int>(weights.cols());
    image.height = static_cast<int>(weights.rows());
    image.pixels.resize(static_cast<std::size_t>(weights.size()) * 4);
    std::vector<float> cells(static_cast<std::size_t>(weights.cols()));
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        heatmap_marked_row(weights, allowed, scale_max, i, cells.data());
        colormap_lookup_marked(map, cells, image.pixels.data() + static_cast<std::size_t>(i) * cells.size() * 4);
    }
    return image;
}

}   // namespace headscope
