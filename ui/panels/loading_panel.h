#pragma once
// In place of the views while another model loads, or while its first result is not in:
// the load's progress and Cancel, why there is nothing to show yet, or, on a long
// input, the heads of the layers landed so far.

#include "core/render/colormap.h"
#include "session/app_state.h"
#include "session/snapshot.h"
#include "ui/panels/window_status.h"
#include "ui/widgets/texture_pool.h"

namespace headscope::ui {

// `shown`: the previous model's snapshot, if any. Returns true when Cancel was clicked.
bool draw_loading_panel(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status);

// The first run of a model on a long input: every head's thumbnail of the layers done so
// far (session::ComputeProgress::landed_thumbnails, when they are `model`'s), a row a
// layer, so the grid fills in before the first result is in.
void draw_landed_layers(TexturePool& textures, const WindowStatus& status, const std::string& model, Colormap colormap);

}   // namespace headscope::ui
