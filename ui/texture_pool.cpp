#include "ui/texture_pool.h"

#include <algorithm>

namespace headscope::ui {

std::chrono::steady_clock::duration rebuild_budget(std::chrono::steady_clock::duration drawing) {
    const std::chrono::steady_clock::duration left = frame_goal - drawing;
    return std::clamp<std::chrono::steady_clock::duration>(left, rebuild_floor, frame_goal);
}

void TexturePool::begin_frame(Clock::duration previous_frame) {
    // spent_ still holds the previous frame's rebuilding.
    budget_ = rebuild_budget(std::max(previous_frame - spent_, Clock::duration::zero()));
    spent_ = Clock::duration::zero();
    deferred_ = 0;
}

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<RgbaImage()>& make) {
    return get_or_build(key, make);
}

const HeatmapTexture& TexturePool::get(const std::string& key, const std::function<MipLevels()>& make) {
    return get_or_build(key, make);
}

const HeatmapTexture& TexturePool::get_in_background(const std::string& key, std::function<MipLevels()> make) {
    Entry& entry = entries_[key];
    if (entry.building.valid() && entry.building.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        // get() rethrows what `make` threw, as get() does; the entry stays stale and is tried again.
        const MipLevels levels = entry.building.get();
        entry.texture.upload(levels);
        entry.epoch = entry.building_epoch;   // stale again if invalidated meanwhile: rebuilt below
    }
    if (entry.epoch == epoch_) return entry.texture;
    if (entry.texture.empty()) return get_or_build(key, make);
    ++deferred_;
    if (!entry.building.valid()) {
        entry.building = std::async(std::launch::async, std::move(make));
        entry.building_epoch = epoch_;
    }
    return entry.texture;
}

} // namespace headscope::ui
