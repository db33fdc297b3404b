#pragma once
// In place of the views while another model loads, or while its first result is not in:
// the load's progress and Cancel, or why there is nothing to show yet.

#include "session/app_state.h"
#include "session/snapshot.h"
#include "ui/panels/window_status.h"

namespace headscope::ui {

// `shown`: the previous model's snapshot, if any. Returns true when Cancel was clicked.
bool draw_loading_panel(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status);

}   // namespace headscope::ui
