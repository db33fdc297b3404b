// headscope-test-window: the desktop app with the modes only tests use (harness_modes.h),
// built by the tests and never installed. `--soak N`: the scripted user (soak.h);
// `--item-rects FILE`, with --screenshot: where every control of the screenshot's frame
// lies (item_rects.h); `--drawn-text FILE`, with --screenshot: every text it drew, and
// where (drawn_text.h); `--toggle-bench N`: the window's recompute timed as a user meets it
// (toggle_bench.h). With --item-rects or --drawn-text, two clicks up to 1 s apart are a double
// click (ImGui's 0.3 s is shorter than a loaded machine's frames): tests that click one spot
// twice on purpose wait longer between the clicks.

#include "app/gui/harness_modes.h"
#include "core/base/error.h"
#include "core/models/assets.h"
#include "tests/gui/harness/drawn_text.h"
#include "tests/gui/harness/item_rects.h"
#include "tests/gui/harness/soak.h"
#include "tests/gui/harness/toggle_bench.h"

#include <CLI/CLI.hpp>
#include <imgui.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

namespace headscope::gui {

namespace {

std::filesystem::path soak_scratch_dir() {
    return std::filesystem::temp_directory_path() / ("headscope-soak-" + std::to_string(getpid()));
}

class SoakHook final : public FrameHook {
public:
    SoakHook(int actions, std::uint64_t seed, ui::AppWindow& app)
        // The test files are beside assets/ in the source tree (tests/images, tests/checkpoints).
        : driver_(app, SoakOptions{actions, seed, (assets_dir() / "..").lexically_normal(), soak_scratch_dir()}) {}
    ~SoakHook() override {
        std::error_code ec;
        std::filesystem::remove_all(soak_scratch_dir(), ec);
    }
    // The next action once this frame is drawn; done: closed as by the user.
    bool after_render(const RenderedFrame& /*frame*/) override { return driver_.after_frame(); }
    bool absorb(const char* what) override {
        driver_.fail_with_exception(what);
        return true;
    }
    int finish() override { return driver_.finish(); }

private:
    SoakDriver driver_;
};

// The screenshot's hook, and the items and text of the frame it wrote (each file when asked).
class FrameRecordHook final : public FrameHook {
public:
    FrameRecordHook(std::string item_rects, std::string drawn_text, std::unique_ptr<FrameHook> screenshot)
        : item_rects_(std::move(item_rects)), drawn_text_(std::move(drawn_text)), screenshot_(std::move(screenshot)) {
        // Tests drive the window with xdotool on a loaded machine, whose frames can take a
        // quarter of a second: two clicks 0.15 s apart must still read as a double click.
        ImGui::GetIO().MouseDoubleClickTime = 1.0f;
        if (!item_rects_.empty()) record_item_rects();
        if (!drawn_text_.empty()) record_drawn_text();
    }
    bool lets_loop_sleep() const override { return screenshot_->lets_loop_sleep(); }
    void frame_started() override {
        clear_item_rects();
        clear_drawn_text();
        screenshot_->frame_started();
    }
    bool after_render(const RenderedFrame& frame) override {
        if (!screenshot_->after_render(frame)) return false;
        try {
            if (!item_rects_.empty()) write_item_rects(item_rects_);
            if (!drawn_text_.empty()) write_drawn_text(drawn_text_);
        } catch (const Error& e) {
            std::fprintf(stderr, "headscope: %s\n", e.what());
            failed_ = true;
        }
        return true;
    }
    int finish() override { return failed_ ? 2 : screenshot_->finish(); }

private:
    std::string item_rects_;
    std::string drawn_text_;
    std::unique_ptr<FrameHook> screenshot_;
    bool failed_ = false;
};

class TestModes final : public HarnessModes {
public:
    void add_options(CLI::App& cli) override {
        cli.add_option("--soak", soak_actions_,
                       "Once the first model is in, perform N seeded-random actions (typing, heads, masks, views, "
                       "good and bad files and models), then exit; non-zero on a hang, a NaN on screen or growing "
                       "memory")
            ->check(CLI::Range(1, 1000000));
        cli.add_option("--soak-seed", soak_seed_, "The seed of --soak's actions")->capture_default_str();
        cli.add_option("--item-rects", item_rects_,
                       "With --screenshot: write where every control of the screenshot's frame lies to this file");
        cli.add_option("--drawn-text", drawn_text_,
                       "With --screenshot: write every text the screenshot's frame drew, and where, to this file");
        cli.add_option("--toggle-bench", toggles_,
                       "Once the first result is in, switch the selected head off and on N times, resting between, "
                       "and print what each recompute took")
            ->check(CLI::Range(1, 1000));
        cli.add_option("--type-bench", typed_,
                       "Once the first result is in, type N tokens at the end of the input one at a time, resting "
                       "between, and print what each recompute took beside the engine's")
            ->check(CLI::Range(1, 1000));
        cli.add_option("--toggle-gap", toggle_gap_, "Seconds of rest before each --toggle-bench switch (or token)")
            ->capture_default_str()
            ->check(CLI::Range(0.0, 600.0));
    }
    bool chosen() const override {
        return soak_actions_ > 0 || !item_rects_.empty() || !drawn_text_.empty() || toggles_ > 0 || typed_ > 0;
    }
    void check(const GuiOptions& options) const override {
        if (soak_actions_ > 0 && (!options.screenshot_path.empty() || options.bench_frames > 0)) {
            throw CLI::ValidationError("--soak", "cannot be used with --screenshot or --bench-frames");
        }
        if (toggles_ > 0 && typed_ > 0)
            throw CLI::ValidationError("--toggle-bench", "cannot be used with --type-bench");
        if ((toggles_ > 0 || typed_ > 0) &&
            (soak_actions_ > 0 || !options.screenshot_path.empty() || options.bench_frames > 0)) {
            throw CLI::ValidationError("--toggle-bench", "cannot be used with --soak, --screenshot or --bench-frames");
        }
        if (!item_rects_.empty() && options.screenshot_path.empty()) {
            throw CLI::ValidationError("--item-rects", "needs --screenshot (the frame whose controls it lists)");
        }
        if (!drawn_text_.empty() && options.screenshot_path.empty()) {
            throw CLI::ValidationError("--drawn-text", "needs --screenshot (the frame whose text it lists)");
        }
    }
    std::unique_ptr<FrameHook> make_hook(const GuiOptions& /*options*/, ui::AppWindow& app,
                                         std::unique_ptr<FrameHook> own) override {
        if (soak_actions_ > 0) return std::make_unique<SoakHook>(soak_actions_, soak_seed_, app);
        if (toggles_ > 0) return make_toggle_bench(app, toggles_, toggle_gap_);
        if (typed_ > 0) return make_toggle_bench(app, typed_, toggle_gap_, true);
        return std::make_unique<FrameRecordHook>(item_rects_, drawn_text_, std::move(own));
    }
    // A soak opens many bad files: it keeps its own recent list, in its scratch folder.
    std::string recent_list_path() const override {
        return soak_actions_ > 0 ? (soak_scratch_dir() / "recent.txt").string() : std::string();
    }

private:
    int soak_actions_ = 0;
    std::uint64_t soak_seed_ = 1;
    std::string item_rects_;
    std::string drawn_text_;
    int toggles_ = 0;
    int typed_ = 0;
    double toggle_gap_ = 3.0;
};

}   // namespace

}   // namespace headscope::gui

int main(int argc, char** argv) {
    headscope::gui::TestModes modes;
    return headscope::gui::run_window(argc, argv, &modes);
}
