#pragma once
// What the main loop (run_window.cpp) runs besides the window itself: the harness modes
// --screenshot and --bench-frames, and a test build's own (harness_modes.h), each a
// FrameHook the loop calls around every frame. An interactive run has none. The hooks reach the window only through
// ui::AppWindow's public interface, as the user's controls do.

#include "app/gui/options.h"
#include "ui/app_window.h"

#include <chrono>
#include <memory>

namespace headscope::gui {

// The frame just rendered, not yet swapped.
struct RenderedFrame {
    int index = 0;
    int framebuffer_width = 0;
    int framebuffer_height = 0;
    double seconds = 0.0;   // since the window opened
};

class FrameHook {
public:
    virtual ~FrameHook() = default;
    // False: every frame is drawn (no sleeping while still, no vsync, not even minimised).
    virtual bool lets_loop_sleep() const { return false; }
    virtual void frame_started() {}
    // After the frame is rendered, before it is swapped: true ends the loop.
    virtual bool after_render(const RenderedFrame& frame) = 0;
    // After the swap; `frame_start` is when this frame began.
    virtual void after_swap(std::chrono::steady_clock::time_point /*frame_start*/) {}
    // An exception out of a frame: true when the hook records it as its failure (the
    // soak), false to let it propagate.
    virtual bool absorb(const char* /*what*/) { return false; }
    // main's exit code once the loop ended.
    virtual int finish() { return 0; }
};

// The hook the options ask for; null for an interactive run.
std::unique_ptr<FrameHook> make_frame_hook(const GuiOptions& options, ui::AppWindow& app);

}   // namespace headscope::gui
