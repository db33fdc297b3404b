#pragma once
// The line at the bottom of the window: the model, T, the selected head, compute and
// frame times, what the worker is doing (layer k of L of a long run, with Cancel), and
// memory: what the process holds (the runs' kept state, the maps computed again for the
// views, the rest: weights and the program) against the machine's RAM.

#include "session/app_state.h"
#include "session/snapshot.h"
#include "ui/panels/window_status.h"

namespace headscope::ui {

// `shown`: null before the first result. True when the user pressed Cancel on a computation.
bool draw_status_bar(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status);

}   // namespace headscope::ui
