#include "tests/gui/harness/toggle_bench.h"

#include "session/app_state.h"
#include "session/snapshot.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace headscope::gui {

namespace {

using Clock = std::chrono::steady_clock;

class ToggleBench final : public FrameHook {
public:
    ToggleBench(ui::AppWindow& app, int toggles, double gap_seconds)
        : app_(app), toggles_(toggles), gap_(gap_seconds) {}

    // The window rests between switches as it does for a user.
    bool lets_loop_sleep() const override { return true; }
    // Switched before the frame's update, which then asks the worker at once.
    void frame_started() override {
        if (waiting_ || done_ >= toggles_ || !app_.settled() || app_.shown() == nullptr) return;
        if (!rested_since_) rested_since_ = Clock::now();
        if (std::chrono::duration<double>(Clock::now() - *rested_since_).count() < gap_) return;
        session::AppState& state = app_.state();
        session::toggle_disabled(state, state.layer, state.head);
        switched_at_ = Clock::now();
        generation_ = app_.shown()->generation;
        waiting_ = true;
    }
    bool after_render(const RenderedFrame& frame) override {
        if (!app_.error().empty()) {
            std::fprintf(stderr, "headscope: %s\n", app_.error().c_str());
            exit_code_ = 2;
            return true;
        }
        if (!waiting_) return done_ >= toggles_ || (done_ == 0 && frame.seconds > 600.0 && fail("the first result"));
        if (std::chrono::duration<double>(Clock::now() - switched_at_).count() > 600.0) {
            return fail("switch " + std::to_string(done_ + 1) + "'s result");
        }
        if (app_.shown()->generation == generation_) return false;
        // Drawn: the result's textures are up (still: nothing left to rebuild). Settled:
        // the views' own jobs for it done too (the Matrix view's hover score, when the
        // pointer rests on the map).
        if (!drawn_at_ && app_.still()) drawn_at_ = Clock::now();
        if (!drawn_at_ || !app_.settled()) return false;
        const session::AppState& state = app_.state();
        const auto ms_since_switch = [&](Clock::time_point t) {
            return std::chrono::duration<double, std::milli>(t - switched_at_).count();
        };
        // Which layers the run computed: from the first switched one, or none where the
        // session held the answer (a head switched back on: the intact run).
        const session::Snapshot& shown = *app_.shown();
        const std::string computed =
            shown.resumed_at >= shown.info.n_layers
                ? std::string("no layer, a held run")
                : "layers " + std::to_string(shown.resumed_at) + "-" + std::to_string(shown.info.n_layers - 1);
        std::printf("toggle %d: head %d.%d %s: compute %.1f ms (%s), on screen %.1f ms after the switch, "
                    "settled %.1f ms\n",
                    ++done_, state.layer, state.head, state.disabled_heads.off(state.layer, state.head) ? "off" : "on",
                    shown.compute_ms, computed.c_str(), ms_since_switch(*drawn_at_), ms_since_switch(Clock::now()));
        std::fflush(stdout);
        waiting_ = false;
        rested_since_.reset();
        drawn_at_.reset();
        return done_ >= toggles_;
    }
    int finish() override { return exit_code_; }

private:
    bool fail(const std::string& what) {
        std::fprintf(stderr, "headscope: %s was not in after 600 s\n", what.c_str());
        exit_code_ = 2;
        return true;
    }

    ui::AppWindow& app_;
    int toggles_;
    double gap_;
    int done_ = 0;
    bool waiting_ = false;
    std::optional<Clock::time_point> rested_since_;
    std::optional<Clock::time_point> drawn_at_;   // the first frame that drew the result whole
    Clock::time_point switched_at_;
    std::uint64_t generation_ = 0;
    int exit_code_ = 0;
};

}   // namespace

std::unique_ptr<FrameHook> make_toggle_bench(ui::AppWindow& app, int toggles, double gap_seconds) {
    return std::make_unique<ToggleBench>(app, toggles, gap_seconds);
}

}   // namespace headscope::gui
