#include "ui/texture_pool.h"

namespace headscope::ui {

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<RgbaImage()>& make) {
    Entry& entry = entries_[key];
    if (entry.epoch != epoch_) {
        entry.texture.upload(make());
        entry.epoch = epoch_;
    }
    return entry.texture;
}

} // namespace headscope::ui
