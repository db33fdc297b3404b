#include "ui/panels/loading_panel.h"

#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_pyramid.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <algorithm>
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
    ImGui::ProgressBar(static_cast<float>(loading.fraction), ImVec2(px(360.0f), 0.0f), overlay);
    ImGui::SameLine();
    const bool cancel = ImGui::Button("Cancel (Esc)");
    if (shown != nullptr) {
        ImGui::TextDisabled("%s stays loaded until this one is in; Cancel keeps it.",
                            model_display_name(shown->model.name).c_str());
    }
    return cancel;
}

void draw_landed_layers(TexturePool& textures, const WindowStatus& status, const std::string& model,
                        Colormap colormap) {
    if (!status.progress || !status.progress->landed_thumbnails || status.progress->model != model) return;
    const session::ComputeProgress& progress = *status.progress;
    const std::vector<Matrix>& landed = *progress.landed_thumbnails;
    if (progress.layers_done <= 0 || landed.empty()) return;
    const auto n_heads = static_cast<Eigen::Index>(landed.size()) / progress.layers_done;
    ImGui::Text("Layers 0-%ld of %ld landed (each head on its own scale):", static_cast<long>(progress.layers_done - 1),
                static_cast<long>(progress.n_layers));
    // Every layer's row in sight where a thumbnail can stay 32 px or more; else it scrolls.
    const ImVec2 room = ImGui::GetContentRegionAvail();
    const ImVec2 spacing = ImGui::GetStyle().ItemSpacing;
    const float across = (room.x - spacing.x * static_cast<float>(n_heads)) / static_cast<float>(n_heads);
    const float down =
        (room.y - spacing.y * static_cast<float>(progress.n_layers)) / static_cast<float>(progress.n_layers);
    const float side = std::clamp(std::min(across, down), px(32.0f), px(96.0f));
    ImGui::BeginChild("landed layers", ImVec2(0.0f, 0.0f), false);
    for (Eigen::Index l = 0; l < progress.layers_done; ++l) {
        for (Eigen::Index h = 0; h < n_heads; ++h) {
            const Matrix& pooled = landed[static_cast<std::size_t>(l * n_heads + h)];
            const auto layer = static_cast<int>(l);
            const auto head = static_cast<int>(h);
            const HeatmapTexture& texture = textures.get(numbered("landed", layer, head), [&] {
                return heatmap_mip_levels(pooled, nullptr, colormap, std::max(pooled.maxCoeff(), 1e-12f));
            });
            if (h > 0) ImGui::SameLine();
            draw_heatmap_thumbnail(numbered("landed", layer, head).c_str(), texture, side, false);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("head %d.%d", layer, head);
        }
    }
    ImGui::EndChild();
}

}   // namespace headscope::ui
