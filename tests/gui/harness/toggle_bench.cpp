#include "tests/gui/harness/toggle_bench.h"

#include "session/app_state.h"
#include "session/snapshot.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace headscope::gui {

namespace {

using Clock = std::chrono::steady_clock;

// Page faults the process has taken so far: first touches of fresh memory, which on the
// VMs this is measured on cost about 10 us each, so a run's time depends on how much of
// its memory the allocator found already touched.
long minor_faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

class EditBench final : public FrameHook {
public:
    EditBench(ui::AppWindow& app, int toggles, double gap_seconds, bool type_tokens)
        : app_(app), toggles_(toggles), gap_(gap_seconds), type_tokens_(type_tokens) {}

    // The window rests between switches as it does for a user.
    bool lets_loop_sleep() const override { return true; }
    // Switched before the frame's update, which then asks the worker at once.
    void frame_started() override {
        if (waiting_ || done_ >= toggles_ || !app_.settled() || app_.shown() == nullptr) return;
        if (!rested_since_) rested_since_ = Clock::now();
        if (std::chrono::duration<double>(Clock::now() - *rested_since_).count() < gap_) return;
        session::AppState& state = app_.state();
        if (type_tokens_) {
            // Token ids: the first one typed again at the end (a valid id of any vocabulary);
            // text: its first character. The run shown now is what the engine's own
            // recompute starts from.
            before_ = app_.shown()->trace;
            if (state.text_is_ids) {
                state.text.append(",").append(std::to_string(app_.shown()->input.ids.front()));
            } else {
                state.text.push_back(state.text.front());
            }
        } else {
            session::toggle_disabled(state, state.layer, state.head);
        }
        switched_at_ = Clock::now();
        faults_at_switch_ = minor_faults();
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
            drawn_faults_ = minor_faults() - faults_at_switch_;
        }
        if (!drawn_at_ || !app_.settled()) return false;
        const session::AppState& state = app_.state();
        const auto ms_since_switch = [&](Clock::time_point t) {
            return std::chrono::duration<double, std::milli>(t - switched_at_).count();
        };
        // Which layers the run computed: from the first switched one, or none where the
        // session held the answer (a head switched back on: the intact run). Typed: the
        // positions it took from the run before.
        const session::Snapshot& shown = *app_.shown();
        const std::string computed =
            type_tokens_ ? std::to_string(shown.reused_positions) + " positions reused"
            : shown.resumed_at >= shown.info.n_layers
                ? std::string("no layer, a held run")
                : "layers " + std::to_string(shown.resumed_at) + "-" + std::to_string(shown.info.n_layers - 1);
        const bool off = state.disabled_heads.off(state.layer, state.head);
        const double on_screen_ms = ms_since_switch(*drawn_at_);
        const double settled_ms = ms_since_switch(Clock::now());
        std::string engine_part;
        if (off || type_tokens_) {
            off_on_screen_ms_.push_back(on_screen_ms);
            engine_ms_.push_back(type_tokens_ ? time_engine_typed() : time_engine(state.layer, state.head));
            char text[64];
            std::snprintf(text, sizeof text, "; the engine alone right after: %.3f ms", engine_ms_.back());
            engine_part = text;
        }
        char what[64];
        std::snprintf(what, sizeof what, type_tokens_ ? "type %d: typed at the end" : "toggle %d: head %d.%d %s",
                      ++done_, state.layer, state.head, off ? "off" : "on");
        std::printf("%s: compute %.1f ms (%s), on screen %.1f ms after the switch, settled %.1f ms, %ld page faults "
                    "to the screen%s\n",
                    what, drawn_compute_ms_, computed.c_str(), on_screen_ms, settled_ms, drawn_faults_,
                    engine_part.c_str());
        std::fflush(stdout);
        waiting_ = false;
        rested_since_.reset();
        drawn_at_.reset();
        if (done_ >= toggles_ && !engine_ms_.empty()) print_engine_reference(state.layer, state.head);
        return done_ >= toggles_;
    }
    int finish() override { return exit_code_; }

private:
    // The same switch off recomputed by the model alone, in this process, as `headscope-cli
    // bench --incremental` times it: resumed from the run with every head on that the
    // window holds (Snapshot::intact). Timed right after each switch off of the window, so
    // that each pair meets the machine in one state: on the shared VMs this is measured on,
    // the engine's own time moves by a quarter from one minute to the next.
    double time_engine(int layer, int head) {
        const session::Snapshot& shown = *app_.shown();
        if (!shown.intact || static_cast<int>(shown.intact->layer_inputs.size()) != shown.info.n_layers) {
            return 0.0;   // no kept run to resume from: not a run this bench can pair
        }
        RunOptions resumed = shown.options;
        resumed.disabled_heads = HeadMask(shown.info.n_layers, shown.info.n_heads);
        resumed.disabled_heads.set(layer, head);
        resumed.resume_from = shown.intact.get();
        resumed.resume_layer = layer;
        return time_model_alone(resumed);
    }

    // The same edit recomputed by the model alone from the run shown before it, reusing the
    // positions the window's run reused (as `headscope-cli bench --appended` does).
    double time_engine_typed() {
        const session::Snapshot& shown = *app_.shown();
        if (!before_ || shown.maps_streamed || shown.reused_positions == 0) return 0.0;
        RunOptions appended = shown.options;
        appended.prefix_from = &*before_;
        appended.prefix_rows = shown.reused_positions;
        const double ms = time_model_alone(appended);
        before_.reset();
        return ms;
    }

    // The shown run's model on its input with `options`, timed, keeping nothing for a later
    // run and reporting no progress, as the engine's bench runs it (a run after a first,
    // as its repeats are); its page faults noted.
    double time_model_alone(RunOptions options) {
        const session::Snapshot& shown = *app_.shown();
        if (!shown.model_ref) return 0.0;
        options.keep_layer_inputs = false;
        options.on_layer = nullptr;
        // A run that streamed its maps (a long input) is timed streaming them too.
        options.on_map = nullptr;
        if (shown.maps_streamed) options.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
        // Run once untimed first: this bench holds the run before the edit and the window's
        // new one, so the engine's first run finds no freed memory and spends tens of ms
        // having fresh pages cleared, which neither the window's run (2 page faults) nor
        // the CLI's repeated runs pay. The second finds the first's memory, as they do.
        (void)shown.model_ref->forward(shown.input, options);
        const long faults_before = minor_faults();
        const auto start = Clock::now();
        (void)shown.model_ref->forward(shown.input, options);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        engine_faults_.push_back(minor_faults() - faults_before);
        return ms;
    }

    // The medians of the pairs, and the median of their ratios: the figure the window is
    // judged by (the engine's time + 15%, docs/performance.md).
    void print_engine_reference(int layer, int head) const {
        const auto median = [](std::vector<double> values) {
            std::sort(values.begin(), values.end());
            return values.empty() ? 0.0 : values[values.size() / 2];
        };
        std::vector<double> ratios;
        for (std::size_t i = 0; i < engine_ms_.size(); ++i) {
            if (engine_ms_[i] > 0.0) ratios.push_back(off_on_screen_ms_[i] / engine_ms_[i]);
        }
        std::vector<double> faults(engine_faults_.begin(), engine_faults_.end());
        char what[96];
        std::snprintf(what, sizeof what,
                      type_tokens_ ? "the same edit recomputed by the model alone after each"
                                   : "head %d.%d off recomputed by the model alone after each switch off",
                      layer, head);
        std::printf("engine: %s: median %.3f ms (%.0f page faults); the window's %s on screen: median %.1f ms; "
                    "paired, the window took %.2f x the engine (median of %zu)\n",
                    what, median(engine_ms_), median(faults), type_tokens_ ? "edits" : "switches off",
                    median(off_on_screen_ms_), median(ratios), ratios.size());
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
    long drawn_faults_ = 0;                       // page faults from the switch to that frame
    long faults_at_switch_ = 0;
    bool type_tokens_;                       // --type-bench: tokens typed at the end, not heads switched
    std::optional<ModelTrace> before_;       // typed: the run shown before the token, for the engine's pair
    std::vector<double> off_on_screen_ms_;   // each switch off's (or token's) time to the screen
    std::vector<double> engine_ms_;          // the engine's time for it, timed right after (0: none)
    std::vector<long> engine_faults_;        // the page faults of that engine run
    Clock::time_point switched_at_;
    std::uint64_t generation_ = 0;
    int exit_code_ = 0;
};

}   // namespace

std::unique_ptr<FrameHook> make_toggle_bench(ui::AppWindow& app, int toggles, double gap_seconds, bool type_tokens) {
    return std::make_unique<EditBench>(app, toggles, gap_seconds, type_tokens);
}

}   // namespace headscope::gui
