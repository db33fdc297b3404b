#pragma once
// headscope's command line: what the window starts on, and the harness modes
// (--screenshot, --bench-frames, a test build's own) the loop runs under (frame_hooks.h).

#include "session/app_state.h"

#include <optional>
#include <string>

namespace headscope::gui {

struct GuiOptions {
    session::AppState state;
    session::StartChoices start_choices;   // what the command line chose, checked against the first model
    bool select_showcase_head = false;     // neither --layer nor --head given
    bool scan_importance = false;
    int width = 1280;
    int height = 800;
    // The content scale (text, spacing, panels, thumbnails); 0: the monitor's own.
    float scale = 0.0f;
    std::string screenshot_path;
    double screenshot_after = 0.0;
    // A test build's mode was chosen (harness_modes.h): every frame drawn at once, no
    // session kept.
    bool test_mode = false;
    int bench_frames = 0;
    bool bench_recompute = false;
    // Where the window's choices go when it closes, to come back at the next plain launch
    // (session::last_session_path()); empty: not kept (a harness run, or no config folder).
    std::string last_session;

    // Draws a hidden window (a screenshot taken at once).
    bool hidden() const { return !screenshot_path.empty() && screenshot_after <= 0.0; }
};

// The options, or the exit code when there is nothing to run (--help, a bad flag: its
// one line printed on stderr).
struct ParsedOptions {
    std::optional<GuiOptions> options;
    int exit_code = 0;
};
class HarnessModes;
ParsedOptions parse_options(int argc, char** argv, HarnessModes* modes);

}   // namespace headscope::gui
