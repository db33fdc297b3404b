#include "core/render/heatmap_image.h"

#include <cmath>

namespace headscope {

Rgba8 RgbaImage::at(int x, int y) const {
    const std::size_t i =
        (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 4;
    return {pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]};
}

RgbaImage heatmap_image(const Matrix& weights, const Mask* allowed, Colormap map, float scale_max) {
    RgbaImage image;
    image.width = static_cast<int>(weights.cols());
    image.height = static_cast<int>(weights.rows());
    image.pixels.resize(static_cast<std::size_t>(weights.size()) * 4);
    const float inverse = scale_max > 0.0f ? 1.0f / scale_max : 1.0f;
    std::uint8_t* out = image.pixels.data();
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        for (Eigen::Index j = 0; j < weights.cols(); ++j) {
            const float w = weights(i, j);
            Rgba8 c;
            if (!std::isfinite(w)) {
                c = not_finite_colour;
            } else if (allowed && !(*allowed)(i, j)) {
                c = masked_colour;
            } else {
                c = colormap_lookup(map, w * inverse);
            }
            *out++ = c.r;
            *out++ = c.g;
            *out++ = c.b;
            *out++ = c.a;
        }
    }
    return image;
}

}   // namespace headscope
