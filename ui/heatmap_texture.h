#pragma once
// An RGBA image as an OpenGL texture, owned (created once, re-uploaded when its
// content changes, deleted with the object). Nearest filtering, so each attention
// cell stays a crisp square at any zoom.

#include "core/heatmap_image.h"

#include <imgui.h>

namespace headscope::ui {

class HeatmapTexture {
public:
    HeatmapTexture() = default;
    HeatmapTexture(const HeatmapTexture&) = delete;
    HeatmapTexture& operator=(const HeatmapTexture&) = delete;
    HeatmapTexture(HeatmapTexture&& other) noexcept;
    HeatmapTexture& operator=(HeatmapTexture&& other) noexcept;
    ~HeatmapTexture();

    void upload(const RgbaImage& image);

    ImTextureID id() const;
    int width() const { return width_; }
    int height() const { return height_; }
    bool empty() const { return texture_ == 0; }

private:
    unsigned int texture_ = 0;
    int width_ = 0;
    int height_ = 0;
};

} // namespace headscope::ui
