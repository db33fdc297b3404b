#pragma once
// GL textures by name, built on first use and rebuilt only after invalidate() (a new
// result, colour map or scale): a frame draws from the pool without uploading.
//
// Rebuilding is spread over frames: a frame rebuilds stale textures until it has spent
// its budget, then draws the rest from their previous content and rebuilds them in the
// next frames. A new result for the 12 x 12 model view of ViT-B/16 (144 maps, each
// pooled and coloured, ~1 ms apiece) took one frame of half a second otherwise; the
// window must stay above 30 fps while the worker recomputes. A texture never built is
// always built.
//
// A map too big for any frame's budget (a 1024 x 1024 matrix: 40-80 ms to pool and colour
// on the window's thread under llvmpipe, beside the rasteriser and the worker) is rebuilt
// on a thread of its own instead (get_in_background), and uploaded once it is done; the
// first frame of a new result waits a little for it (wait_for_results).

#include "ui/widgets/heatmap_texture.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace headscope::ui {

// What a frame may spend rebuilding textures, given how long the previous frame took
// without its own rebuilding: what is left of frame_goal, and at least rebuild_floor (so
// every frame makes progress). A fixed 20 ms suited a GPU, where drawing takes ~4 ms;
// under software rendering (llvmpipe) the ViT-B/16 model view took ~17 ms to draw, and
// the frames after each new result took ~37 ms (27 fps).
std::chrono::steady_clock::duration rebuild_budget(std::chrono::steady_clock::duration drawing);
// 50 fps: leaves 13 ms of a 30 fps frame for the host's hiccups (a shared machine's
// slowest frames ran 5-10 ms over the rest).
inline constexpr std::chrono::milliseconds frame_goal{20};
inline constexpr std::chrono::milliseconds rebuild_floor{1};

// The pool over any texture type with upload(const MipLevels&), upload(const RgbaImage&)
// and empty(): the window's is TexturePool (GL); the tests count uploads on a stand-in.
template <typename Texture>
class BasicTexturePool {
public:
    // A picture: one level.
    const Texture& get(const std::string& key, const std::function<RgbaImage()>& make) {
        return get_or_build(key, make);
    }
    // A heatmap: its max-pooled mip levels (heatmap_mip_levels), so it stays faithful
    // when drawn smaller than its size.
    const Texture& get(const std::string& key, const std::function<MipLevels()>& make) {
        return get_or_build(key, make);
    }
    // As get(key, make) for a heatmap, but once the texture exists a rebuild runs on a
    // thread of its own while frames draw the previous content; the first frame after it
    // finishes uploads it (or this one, if it may wait: wait_for_results). `prepare` runs here, on the caller's thread,
    // and only when a build starts; the job it returns runs after this call returns, so it must own what it reads
    // (gathered in `prepare`, never once per frame: a 1024 x 1024 map's copy is 4 MB). A texture never built is built
    // here, at once. The levels a job made are freed on the next job's thread (see below).
    using BackgroundJob = std::function<MipLevels()>;
    const Texture& get_in_background(const std::string& key, const std::function<BackgroundJob()>& prepare) {
        Entry& entry = entries_[key];
        take_finished(entry, Clock::duration::zero());
        if (entry.epoch == epoch_) return entry.texture;
        if (entry.texture.empty()) return get_or_build(key, [&] { return prepare()(); });
        if (!entry.building.valid()) {
            entry.building =
                std::async(std::launch::async, [job = prepare(), retired = std::exchange(retired_, {})]() mutable {
                    std::vector<MipLevels>().swap(retired);
                    return job();
                });
            entry.building_epoch = epoch_;
        }
        // A frame allowed to wait (wait_for_results) spends what is left of its allowance here.
        if (wait_left_ > Clock::duration::zero()) {
            const auto start = Clock::now();
            take_finished(entry, wait_left_);
            wait_left_ -= std::min(wait_left_, Clock::now() - start);
            if (entry.epoch == epoch_) return entry.texture;
        }
        ++deferred_;
        return entry.texture;
    }
    void invalidate() { ++epoch_; }

    using Clock = std::chrono::steady_clock;

    // Once per frame, before drawing: starts the frame's rebuilding budget (rebuild_budget).
    // `previous_frame`: the previous frame from its start (after any sleep) to its swap,
    // its rebuilding included; zero for the first.
    void begin_frame(Clock::duration previous_frame) {
        // spent_ still holds the previous frame's rebuilding.
        budget_ = rebuild_budget(std::max(previous_frame - spent_, Clock::duration::zero()));
        spent_ = Clock::duration::zero();
        deferred_ = 0;
        wait_left_ = Clock::duration::zero();
    }
    // This frame (after begin_frame) may wait up to `limit` in all for the background
    // rebuilds it starts or finds under way, and draw their new content: the first frame of
    // a new result, which would otherwise show the old map for a frame or two while its
    // levels are made (16-50 ms for a 1,000 x 1,000 map under software rendering) and put
    // it up a frame later, when the person has been waiting for exactly that map.
    void wait_for_results(Clock::duration limit) { wait_left_ = limit; }
    // False while a stale texture was drawn from its previous content since the last
    // begin_frame(): the screen is not yet the newest result's (screenshots wait).
    bool caught_up() const { return deferred_ == 0; }

private:
    struct Entry {
        Texture texture;
        std::uint64_t epoch = 0;
        // get_in_background: the rebuild under way, and the epoch it started in.
        std::future<MipLevels> building;
        std::uint64_t building_epoch = 0;
    };
    // Uploads the entry's rebuild once it is done, waiting up to `wait` for it. Its levels
    // are freed by the next rebuild's thread, not here: on the window's thread, giving back
    // a 1024 x 1024 map's 5.6 MB of levels took 5-8 ms while the worker was unmapping its
    // previous result. At most one per map drawn meanwhile waits. get() rethrows what the
    // job threw, as get() does; the entry stays stale and is tried again.
    void take_finished(Entry& entry, Clock::duration wait) {
        if (!entry.building.valid() || entry.building.wait_for(wait) != std::future_status::ready) return;
        MipLevels levels = entry.building.get();
        entry.texture.upload(levels);
        retired_.push_back(std::move(levels));
        entry.epoch = entry.building_epoch;   // stale again if invalidated meanwhile: rebuilt after
    }
    // Marked built only after the upload: a `make` that throws is tried again next frame.
    template <typename Make>
    const Texture& get_or_build(const std::string& key, const Make& make) {
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
    bool over_budget() const { return spent_ >= budget_; }

    std::map<std::string, Entry> entries_;
    std::uint64_t epoch_ = 1;
    Clock::duration budget_ = frame_goal;   // for rebuilding, this frame
    Clock::duration spent_{};               // rebuilding, this frame
    int deferred_ = 0;                      // stale textures drawn as they were, this frame
    std::vector<MipLevels> retired_;        // uploaded levels, for the next background rebuild to free
    Clock::duration wait_left_{};           // wait_for_results: what this frame may still wait
};

using TexturePool = BasicTexturePool<HeatmapTexture>;

}   // namespace headscope::ui
