#pragma once
// GL textures by name, built on first use and rebuilt only after invalidate() (a new
// result, colour map or scale): a frame draws from the pool without uploading.
//
// Rebuilding is spread over frames: a frame rebuilds stale textures until it has spent
// its budget, then draws the rest from their previous content and rebuilds them in the
// next frames. A new result for the 12 x 12 model view of ViT-B/16 (144 maps, each
// pooled and coloured) took one frame of half a second otherwise; the window must stay
// above 30 fps while the worker recomputes. A texture never built is always built.

#include "ui/heatmap_texture.h"

#include <chrono>
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

    // Once per frame, before drawing: starts the frame's rebuilding budget.
    void begin_frame();
    // False while a stale texture was drawn from its previous content since the last
    // begin_frame(): the screen is not yet the newest result's (screenshots wait).
    bool caught_up() const { return deferred_ == 0; }

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
            if (!entry.texture.empty() && over_budget()) {
                ++deferred_;
                return entry.texture;
            }
            const auto start = Clock::now();
            entry.texture.upload(make());
            entry.epoch = epoch_;
            spent_ += Clock::now() - start;
        }
        return entry.texture;
    }
    using Clock = std::chrono::steady_clock;
    bool over_budget() const { return spent_ >= budget; }
    // What rebuilding may take of a frame: with ~5 ms of drawing, 40 fps at worst.
    static constexpr std::chrono::milliseconds budget{20};

    std::map<std::string, Entry> entries_;
    std::uint64_t epoch_ = 1;
    Clock::duration spent_{};   // rebuilding, this frame
    int deferred_ = 0;          // stale textures drawn as they were, this frame
};

} // namespace headscope::ui
