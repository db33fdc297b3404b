#include "ui/texture_pool.h"

namespace headscope::ui {

void TexturePool::begin_frame() {
    spent_ = Clock::duration::zero();
    deferred_ = 0;
}

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<RgbaImage()>& make) {
    return get_or_build(key, make);
}

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<MipLevels()>& make) {
    return get_or_build(key, make);
}

} // namespace headscope::ui
