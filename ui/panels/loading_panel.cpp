#include "ui/panels/loading_panel.h"

#include <imgui.h>

#include <cstdio>

namespace headscope::ui {

using session::is_builtin_model;
using session::model_display_name;

bool draw_loading_panel(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status) {
    if (!status.loading) {
        if (status.computing || !status.failed) {
            ImGui::Text("Computing %s ...", model_display_name(state.model.name).c_str());
        } else {
            // Loaded, but its first result failed (an input too long for it, ...).
            ImGui::TextWrapped("%s has no result yet: its views appear once the input above works for it.",
                               model_display_name(state.model.name).c_str());
        }
        return false;
    }
    const session::LoadProgress& loading = *status.loading;
    ImGui::Text("Loading %s", model_display_name(loading.name).c_str());
    if (!is_builtin_model(loading.name)) ImGui::TextDisabled("%s", loading.name.c_str());
    char overlay[32];
    std::snprintf(overlay, sizeof overlay, "%.0f%%", 100.0 * loading.fraction);
    ImGui::ProgressBar(static_cast<float>(loading.fraction), ImVec2(360.0f, 0.0f), overlay);
    ImGui::SameLine();
    const bool cancel = ImGui::Button("Cancel (Esc)");
    if (shown != nullptr) {
        ImGui::TextDisabled("%s stays loaded until this one is in; Cancel keeps it.",
                            model_display_name(shown->model.name).c_str());
    }
    return cancel;
}

}   // namespace headscope::ui
