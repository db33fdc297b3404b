#include "ui/widgets/job_progress.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <cstdio>

namespace headscope::ui {

void draw_job_progress(session::BackgroundJobs& jobs, const std::string& key, const char* what,
                       const session::BackgroundJobs::Work& retry) {
    const auto running = jobs.running();
    if (running && running->first == key) {
        char overlay[48];
        std::snprintf(overlay, sizeof overlay, "%s %.0f%%", what, 100.0 * running->second);
        ImGui::ProgressBar(static_cast<float>(running->second), ImVec2(px(260.0f), 0.0f), overlay);
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) jobs.cancel();
        return;
    }
    if (const std::string error = jobs.error(key); !error.empty()) {
        ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s: %s", what, error.c_str());
        ImGui::SameLine();
        ImGui::PushID(what);
        if (ImGui::Button("Retry")) jobs.restart(key, retry);
        ImGui::PopID();
    }
}

}   // namespace headscope::ui
