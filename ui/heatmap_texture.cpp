#include "ui/heatmap_texture.h"

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

void HeatmapTexture::upload(const RgbaImage& image) {
    if (texture_ == 0) glGenTextures(1, &texture_);
    glBindTexture(GL_TEXTURE_2D, texture_);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, image.width, image.height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                 image.pixels.data());
    width_ = image.width;
    height_ = image.height;
}

ImTextureID HeatmapTexture::id() const {
    return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(texture_));
}

} // namespace headscope::ui
