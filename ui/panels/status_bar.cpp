#include "ui/panels/status_bar.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace headscope::ui {

namespace {

std::string activity_text(const WindowStatus& status) {
    std::string activity;
    char text[96];
    if (status.loading) {
        std::snprintf(text, sizeof text, "   loading %.0f%%: ", 100.0 * status.loading->fraction);
        activity.append(text).append(session::model_display_name(status.loading->name));
    } else if (status.progress && status.progress->n_layers > 0) {
        std::snprintf(text, sizeof text, "   computing%s%s: layer %ld of %ld", status.progress->run.empty() ? "" : " ",
                      status.progress->run.c_str(), static_cast<long>(status.progress->layers_done),
                      static_cast<long>(status.progress->n_layers));
        activity = text;
    } else if (status.computing) {
        activity = "   computing...";
    }
    if (!status.note.empty()) activity.append("   ").append(status.note);
    return activity;
}

// "412 MB", "2.35 GB".
std::string size_text(double bytes) {
    char text[32];
    if (bytes < 1e9) {
        std::snprintf(text, sizeof text, "%.0f MB", bytes / 1e6);
    } else {
        std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
    }
    return text;
}

// "memory 2.90 GB / 24.0 GB: runs 412 MB, maps shown 4 MB"; the rest is the weights and the program.
std::string memory_text(const session::Snapshot* shown, const WindowStatus& status) {
    const MachineMemory& memory = status.memory;
    if (memory.resident <= 0 || memory.ram <= 0) return {};
    const double runs = shown != nullptr ? shown->kept_bytes() : 0.0;
    const double maps = shown != nullptr ? static_cast<double>(shown->shown_maps->bytes()) : 0.0;
    char ram[32];
    std::snprintf(ram, sizeof ram, "%.1f GB", memory.ram / 1e9);
    return "memory " + size_text(memory.resident) + " / " + ram + ": runs " + size_text(runs) + ", maps shown " +
           size_text(maps);
}

}   // namespace

bool draw_status_bar(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status) {
    const ImGuiIO& io = ImGui::GetIO();
    const std::string activity = activity_text(status);
    bool cancel = false;
    if (shown == nullptr) {
        ImGui::Text("%s%s", status.computing ? "" : "no result", activity.c_str());
    } else {
        ImGui::Text("%s   T = %zu%s   layer %d head %d   compute %.1f ms   frame %.1f ms%s", shown->info.name.c_str(),
                    shown->input.labels.size(), shown->maps_streamed ? " (maps on demand)" : "", state.layer,
                    state.head, shown->compute_ms, 1000.0 / std::max(1.0f, io.Framerate), activity.c_str());
    }
    if (status.progress && !status.loading) {
        ImGui::SameLine();
        cancel = ImGui::SmallButton("Cancel");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Stop this computation (Esc): the last result stays on screen");
    }
    const std::string memory = memory_text(shown, status);
    if (!memory.empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("   %s", memory.c_str());
        if (ImGui::IsItemHovered()) {
            const double rest = status.memory.resident - (shown != nullptr ? shown->kept_bytes() : 0.0) -
                                (shown != nullptr ? static_cast<double>(shown->shown_maps->bytes()) : 0.0);
            ImGui::SetTooltip("This process's resident memory against the machine's RAM.\n"
                              "runs: what the shown result's runs keep (maps, or each layer's queries and keys)\n"
                              "maps shown: maps computed again for the views (long inputs)\n"
                              "the rest, %s: the model's weights and the program",
                              size_text(std::max(0.0, rest)).c_str());
        }
    }
    return cancel;
}

}   // namespace headscope::ui
