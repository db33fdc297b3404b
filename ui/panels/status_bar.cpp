#include "ui/panels/status_bar.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
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
    } else if (status.progress && !status.progress->run.empty()) {
        activity = "   computing " + status.progress->run + "...";
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

// What the process holds: resident and RAM (status), the shown result's runs, and the
// maps computed again for its views; the rest is the weights and the program.
struct MemoryParts {
    double resident = 0, ram = 0, runs = 0, maps = 0;
    double rest() const { return std::max(0.0, resident - runs - maps); }
};

MemoryParts memory_parts(const session::Snapshot* shown, const WindowStatus& status) {
    MemoryParts parts{status.memory.resident, status.memory.ram};
    if (shown != nullptr) {
        parts.runs = shown->kept_bytes();
        parts.maps = static_cast<double>(shown->shown_maps->bytes());
    }
    return parts;
}

void draw_memory(const MemoryParts& memory) {
    if (memory.resident <= 0 || memory.ram <= 0) return;
    char text[160];
    std::snprintf(text, sizeof text, "   memory %s / %.1f GB: runs %s, maps shown %s",
                  size_text(memory.resident).c_str(), memory.ram / 1e9, size_text(memory.runs).c_str(),
                  size_text(memory.maps).c_str());
    // The bar is one line: in a narrow window the memory line is left out rather than cut.
    ImGui::SameLine();
    if (ImGui::CalcTextSize(text).x > ImGui::GetContentRegionAvail().x) return;
    ImGui::TextDisabled("%s", text);
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("This process's resident memory against the machine's RAM.\n"
                          "runs: what the shown result's runs keep (maps, or each layer's queries and keys)\n"
                          "maps shown: maps computed again for the views (long inputs)\n"
                          "the rest, %s: the model's weights and the program",
                          size_text(memory.rest()).c_str());
    }
}

}   // namespace

bool draw_status_bar(const session::Snapshot* shown, const session::AppState& state, const WindowStatus& status) {
    const std::string activity = activity_text(status);
    bool cancel = false;
    if (shown == nullptr) {
        ImGui::Text("%s%s", status.computing ? "" : "no result", activity.c_str());
    } else {
        // A folder by its last name (the title and the tooltip give the whole path).
        const std::string folder = std::filesystem::path(shown->info.name).filename().string();
        const std::string& name = folder.empty() ? shown->info.name : folder;
        // An encoder-decoder's positions are its target's and its source's.
        const std::string positions = shown->input.source
                                          ? std::to_string(shown->input.labels.size()) + " target, " +
                                                std::to_string(shown->input.source->labels.size()) + " source"
                                          : std::to_string(shown->input.labels.size());
        ImGui::Text("%s   T = %s%s   layer %d head %d   compute %.1f ms   frame %.1f ms%s", name.c_str(),
                    positions.c_str(), shown->maps_streamed ? " (maps on demand)" : "", state.layer, state.head,
                    shown->compute_ms, status.frame_ms, activity.c_str());
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("%s\ncompute: the shown result's run on the worker\nframe: the last frame's drawing, "
                              "from its start to the screen (the window rests between frames when nothing moves)",
                              shown->info.name.c_str());
        }
    }
    if (status.progress && !status.loading) {
        ImGui::SameLine();
        cancel = ImGui::SmallButton("Cancel");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Stop this computation (Esc): the last result stays on screen");
    }
    draw_memory(memory_parts(shown, status));
    return cancel;
}

}   // namespace headscope::ui
