#include "ui/widgets/heatmap_texture.h"

#include <GL/gl.h>

#include <cstdint>
#include <utility>

namespace headscope::ui {

HeatmapTexture::HeatmapTexture(HeatmapTexture&& other) noexcept
    : texture_(std::exchange(other.texture_, 0)), width_(other.width_), height_(other.height_) {}

HeatmapTexture& HeatmapTexture::operator=(HeatmapTexture&& other) noexcept {
    if (this != &other) {
        if (texture_) glDeleteTextures(1, &texture_);
        texture_ = std::exchange(other.texture_, 0);
        width_ = other.width_;
        height_ = other.height_;
    }
    return *this;
}

HeatmapTexture::~HeatmapTexture() {
    if (texture_) glDeleteTextures(1, &texture_);
}

void HeatmapTexture::upload(const RgbaImage& image) { upload(MipLevels{image}); }

void HeatmapTexture::upload(const MipLevels& levels) {
    if (levels.empty()) return;
    if (texture_ == 0) glGenTextures(1, &texture_);
    glBindTexture(GL_TEXTURE_2D, texture_);
    const auto max_level = static_cast<GLint>(levels.size()) - 1;
    // MAX_LEVEL says which levels exist: a texture re-uploaded with fewer levels (a
    // shorter input) ignores its stale ones, and a single level needs no others.
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_BASE_LEVEL, 0);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, max_level);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, max_level > 0 ? GL_NEAREST_MIPMAP_NEAREST : GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    // Nearest-level selection takes level 0 up to ~1.41 texels per pixel, where nearest
    // sampling still skips every third texel or so; half a level of bias takes the
    // next smaller level as soon as the map is drawn smaller than its size (at 1:1 and
    // above, level 0: cells stay crisp squares).
    glTexParameterf(GL_TEXTURE_2D, GL_TEXTURE_LOD_BIAS, max_level > 0 ? 0.5f : 0.0f);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    for (GLint level = 0; level <= max_level; ++level) {
        const RgbaImage& image = levels[static_cast<std::size_t>(level)];
        glTexImage2D(GL_TEXTURE_2D, level, GL_RGBA, image.width, image.height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                     image.pixels.data());
    }
    width_ = levels.front().width;
    height_ = levels.front().height;
}

ImTextureID HeatmapTexture::id() const { return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(texture_)); }

}   // namespace headscope::ui
