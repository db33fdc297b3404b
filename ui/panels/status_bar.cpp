#include "ui/panels/status_bar.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace headscope::ui {

void draw_status_bar(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status) {
    const ImGuiIO& io = ImGui::GetIO();
    std::string activity;
    if (status.loading) {
        char text[64];
        std::snprintf(text, sizeof text, "   loading %.0f%%: ", 100.0 * status.loading->fraction);
        activity.append(text).append(session::model_display_name(status.loading->name));
    } else if (status.computing) {
        activity = "   computing...";
    }
    if (!status.note.empty()) activity.append("   ").append(status.note);
    if (shown == nullptr) {
        ImGui::Text("%s%s", status.computing ? "" : "no result", activity.c_str());
        return;
    }
    ImGui::Text("%s   T = %zu   layer %d head %d   compute %.1f ms   frame %.1f ms%s", shown->info.name.c_str(),
                shown->input.labels.size(), state.layer, state.head, shown->compute_ms,
                1000.0 / std::max(1.0f, io.Framerate), activity.c_str());
}

}   // namespace headscope::ui
