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
    // A picture: one level.
    const HeatmapTexture& get(const std::string& key, const std::function<RgbaImage()>& make);
    // A heatmap: its max-pooled mip levels (heatmap_mip_levels), so it stays faithful
    // when drawn smaller than its size.
    const HeatmapTexture& get(const std::string& key, const std::function<MipLevels()>& make);
    void invalidate() { ++epoch_; }

private:
    struct Entry {
        HeatmapTexture texture;
        std::uint64_t epoch = 0;
    };
    // Marked built only after the upload: a `make` that throws is tried again next frame.
    template <typename Make>
    const HeatmapTexture& get_or_build(const std::string& key, const Make& make) {
        Entry& entry = entries_[key];
        if (entry.epoch != epoch_) {
            entry.texture.upload(make());
            entry.epoch = epoch_;
        }
        return entry.texture;
    }

    std::map<std::string, Entry> entries_;
    std::uint64_t epoch_ = 1;
};

} // namespace headscope::ui
