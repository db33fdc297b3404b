#include "ui/texture_pool.h"

namespace headscope::ui {

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<RgbaImage()>& make) {
    return get_or_build(key, make);
}

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<MipLevels()>& make) {
    return get_or_build(key, make);
}

} // namespace headscope::ui
