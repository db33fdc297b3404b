#include "tests/gui/harness/toggle_bench.h"

#include "session/app_state.h"
#include "session/snapshot.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

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
        if (!drawn_at_ && app_.still()) {
            drawn_at_ = Clock::now();
            // The run drawn first: a long run's maps come before its numbers (Snapshot::numbers_pending).
            drawn_compute_ms_ = app_.shown()->compute_ms;
        }
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
        const bool off = state.disabled_heads.off(state.layer, state.head);
        std::printf("toggle %d: head %d.%d %s: compute %.1f ms (%s), on screen %.1f ms after the switch, "
                    "settled %.1f ms\n",
                    ++done_, state.layer, state.head, off ? "off" : "on", drawn_compute_ms_, computed.c_str(),
                    ms_since_switch(*drawn_at_), ms_since_switch(Clock::now()));
        std::fflush(stdout);
        if (off) off_on_screen_ms_.push_back(ms_since_switch(*drawn_at_));
        waiting_ = false;
        rested_since_.reset();
        drawn_at_.reset();
        if (done_ >= toggles_ && !off_on_screen_ms_.empty()) print_engine_reference(state.layer, state.head);
        return done_ >= toggles_;
    }
    int finish() override { return exit_code_; }

private:
    // The same switch off recomputed by the model alone, in this process, as `headscope-cli
    // bench --incremental` times it (resumed from a run with every head on), against the
    // window's switches off: the two measured side by side on one machine state.
    void print_engine_reference(int layer, int head) const {
        const session::Snapshot& shown = *app_.shown();
        if (!shown.model_ref) return;
        RunOptions intact = shown.options;
        intact.disabled_heads = {};
        intact.keep_layer_inputs = true;
        intact.on_layer = nullptr;
        // A run that streamed its maps (a long input) is timed streaming them too.
        intact.on_map = nullptr;
        if (shown.maps_streamed) intact.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
        const ModelTrace kept = shown.model_ref->forward(shown.input, intact);
        RunOptions resumed = intact;
        resumed.keep_layer_inputs = false;
        resumed.disabled_heads = HeadMask(shown.info.n_layers, shown.info.n_heads);
        resumed.disabled_heads.set(layer, head);
        resumed.resume_from = &kept;
        resumed.resume_layer = layer;
        std::vector<double> engine_ms;
        for (int i = 0; i < 5; ++i) {
            const auto start = Clock::now();
            (void)shown.model_ref->forward(shown.input, resumed);
            engine_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        }
        std::vector<double> window_ms = off_on_screen_ms_;
        std::sort(engine_ms.begin(), engine_ms.end());
        std::sort(window_ms.begin(), window_ms.end());
        const double engine = engine_ms[engine_ms.size() / 2];
        const double window = window_ms[window_ms.size() / 2];
        std::printf("engine: head %d.%d off recomputed by the model alone: median %.1f ms of 5; the window's "
                    "switches off on screen: median %.1f ms of %zu, %.2f x the engine\n",
                    layer, head, engine, window, window_ms.size(), engine > 0.0 ? window / engine : 0.0);
        std::fflush(stdout);
    }

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
    double drawn_compute_ms_ = 0.0;               // the worker's time for the run drawn then
    std::vector<double> off_on_screen_ms_;        // each switch off's time to the screen
    Clock::time_point switched_at_;
    std::uint64_t generation_ = 0;
    int exit_code_ = 0;
};

}   // namespace

std::unique_ptr<FrameHook> make_toggle_bench(ui::AppWindow& app, int toggles, double gap_seconds) {
    return std::make_unique<ToggleBench>(app, toggles, gap_seconds);
}

}   // namespace headscope::gui
