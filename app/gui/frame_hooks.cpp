#include "app/gui/frame_hooks.h"

#include "app/gui/frame_timer.h"
#include "app/gui/screenshot.h"
#include "core/base/error.h"
#include "core/models/assets.h"
#include "core/render/png_export.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

namespace headscope::gui {

namespace {

// Frames drawn with the result settled before a screenshot or timing: ImGui settles its
// layout and hover state over two or three. A view's own job (rollout, similarity) is
// done one frame before its result is drawn, and a window decides on its scroll bar from
// the frame before: four, so the view and its scroll bar are both in.
constexpr int settling_frames = 4;
// --bench-recompute paces frames as a 60 Hz display does.
constexpr std::chrono::microseconds display_refresh{16667};

class ScreenshotHook final : public FrameHook {
public:
    ScreenshotHook(const GuiOptions& options, ui::AppWindow& app) : options_(options), app_(app) {}
    // A screenshot sleeps too: the worker computes at idle priority (session/worker.cpp),
    // and a loop that never sleeps would leave it only what the rasteriser does not take.
    bool lets_loop_sleep() const override { return true; }

    bool after_render(const RenderedFrame& frame) override {
        settled_frames_ = app_.settled() ? settled_frames_ + 1 : 0;
        const bool waited = frame.seconds >= options_.screenshot_after;
        const bool gave_up = frame.seconds > options_.screenshot_after + 60.0;   // never hang a test
        if (!waited || (settled_frames_ < settling_frames && !gave_up)) return false;
        try {
            write_png(options_.screenshot_path, capture_framebuffer(frame.framebuffer_width, frame.framebuffer_height));
            if (!app_.error().empty()) fail(app_.error());
            if (settled_frames_ < settling_frames) {
                fail("the result was not ready after " + std::to_string(frame.index) + " frames (60 s)");
            }
        } catch (const Error& e) {
            fail(e.what());
        }
        return true;
    }
    int finish() override { return exit_code_; }

private:
    void fail(const std::string& message) {
        std::fprintf(stderr, "headscope: %s\n", message.c_str());
        exit_code_ = 2;
    }

    const GuiOptions& options_;
    ui::AppWindow& app_;
    int settled_frames_ = 0;
    int exit_code_ = 0;
};

class BenchHook final : public FrameHook {
public:
    BenchHook(const GuiOptions& options, ui::AppWindow& app) : options_(options), app_(app) {}

    void frame_started() override {
        timed_frame_ = timing_;   // timing may begin halfway through this frame
        if (timed_frame_) timer_.start();
    }
    bool after_render(const RenderedFrame& frame) override {
        if (timed_frame_ && !options_.bench_recompute) timer_.stop();
        settled_frames_ = app_.settled() ? settled_frames_ + 1 : 0;
        if (timing_ && timer_.count() >= options_.bench_frames) {
            std::string line = timer_.summary(options_.state.view, std::nullopt);
            if (options_.bench_recompute) line = while_recomputing(line, recomputes_, timer_.max_ms());
            std::printf("%s\n", line.c_str());
            return true;
        }
        // --bench-recompute: as soon as a result is in, ask for the next one (head 0.0
        // switched off or on, as its switch in the controls does).
        if (options_.bench_recompute && timing_ && app_.settled()) {
            session::toggle_disabled(app_.state(), 0, 0);
            ++recomputes_;
        }
        if (!timing_ && settled_frames_ >= settling_frames) {
            // Timing an error message would measure the wrong screen.
            if (!app_.error().empty()) return fail(app_.error());
            timing_ = true;
        } else if (!timing_ && frame.seconds > 600.0) {   // never hang a benchmark
            return fail("the result was not ready after " + std::to_string(frame.index) + " frames (600 s)");
        }
        return false;
    }
    void after_swap(std::chrono::steady_clock::time_point frame_start) override {
        if (!options_.bench_recompute) return;
        if (timed_frame_) timer_.stop();
        // At most 60 frames a second, as a display's vertical sync paces them (the sleep
        // is not timed). Back to back, the window and the rasteriser took both cores and
        // the worker (at idle priority) got almost nothing, and the frames after a result,
        // which rebuild textures, went unmeasured.
        std::this_thread::sleep_until(frame_start + display_refresh);
    }
    int finish() override { return exit_code_; }

private:
    bool fail(const std::string& message) {
        std::fprintf(stderr, "headscope: %s\n", message.c_str());
        exit_code_ = 2;
        return true;
    }

    const GuiOptions& options_;
    ui::AppWindow& app_;
    FrameTimer timer_;
    bool timing_ = false;
    bool timed_frame_ = false;
    int settled_frames_ = 0;
    int recomputes_ = 0;   // requests made while timing
    int exit_code_ = 0;
};

}   // namespace

std::unique_ptr<FrameHook> make_frame_hook(const GuiOptions& options, ui::AppWindow& app) {
    if (!options.screenshot_path.empty()) return std::make_unique<ScreenshotHook>(options, app);
    if (options.bench_frames > 0) return std::make_unique<BenchHook>(options, app);
    return nullptr;
}

}   // namespace headscope::gui
