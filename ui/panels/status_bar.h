#pragma once
// The line at the bottom of the window: the model, T, the selected head, compute and
// frame times, and what the worker is doing.

#include "session/app_state.h"
#include "session/snapshot.h"
#include "ui/panels/window_status.h"

namespace headscope::ui {

// `shown`: null before the first result.
void draw_status_bar(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status);

}   // namespace headscope::ui
