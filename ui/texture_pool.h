#pragma once
// GL textures by name, built on first use and rebuilt only after invalidate() (a new
// result, colour map or scale): a frame draws from the pool without uploading.

#include "ui/heatmap_texture.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace headscope::ui {

class TexturePool {
public:
    const HeatmapTexture& get(const std::string& key, const std::function<RgbaImage()>& make);
    void invalidate() { ++epoch_; }

private:
    struct Entry {
        HeatmapTexture texture;
        std::uint64_t epoch = 0;
    };
    std::map<std::string, Entry> entries_;
    std::uint64_t epoch_ = 1;
};

} // namespace headscope::ui
