#pragma once
// An RGBA image as an OpenGL texture, owned (created once, re-uploaded when its
// content changes, deleted with the object). Nearest filtering, so each attention
// cell stays a crisp square at any zoom; a heatmap also gets its max-pooled mip levels
// (heatmap_pyramid.h), so a map drawn smaller than its size loses no strong cell.

#include "core/render/heatmap_image.h"
#include "ui/widgets/heatmap_pyramid.h"

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

    // One level (a picture): drawn smaller, nearest sampling skips texels, as before.
    void upload(const RgbaImage& image);
    // Level 0 first, each next one as mip_next_size makes it (heatmap_mip_levels).
    void upload(const MipLevels& levels);

    ImTextureID id() const;
    int width() const { return width_; }
    int height() const { return height_; }
    bool empty() const { return texture_ == 0; }

private:
    unsigned int texture_ = 0;
    int width_ = 0;
    int height_ = 0;
};

}   // namespace headscope::ui
