#pragma once
// Modes a test build adds to the window (tests/gui/harness: the soak's scripted user, the
// controls' rectangles for the layout tests): flags of their own, and a FrameHook that
// drives or watches the window. The shipped program has none (main.cpp).

#include "app/gui/frame_hooks.h"
#include "app/gui/options.h"
#include "ui/app_window.h"

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace headscope::gui {

class HarnessModes {
public:
    virtual ~HarnessModes() = default;
    virtual void add_options(CLI::App& cli) = 0;
    // One of its flags was given: a harness run (no last session kept or restored).
    virtual bool chosen() const = 0;
    // Flags that cannot go together with the window's own (throws CLI::ValidationError).
    virtual void check(const GuiOptions& options) const = 0;
    // The hook of the run; `own` is the one the window's options asked for (a screenshot's),
    // or null: a harness hook may wrap it.
    virtual std::unique_ptr<FrameHook> make_hook(const GuiOptions& options, ui::AppWindow& app,
                                                 std::unique_ptr<FrameHook> own) = 0;
    // Where the run keeps its recent list; empty: the user's.
    virtual std::string recent_list_path() const { return {}; }
};

// The program: options, window, loop. `modes` null: the shipped program.
int run_window(int argc, char** argv, HarnessModes* modes);

}   // namespace headscope::gui
