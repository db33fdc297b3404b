// The Matrix view: one head's [T, T] map, with the custom-mask editor.

#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/cell_under.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace headscope::ui {

using namespace session;

class MatrixView final : public View {
public:
    std::string_view name() const override { return "matrix"; }
    const char* title() const override { return "Matrix"; }
    std::string_view summary() const override { return "one head's [T, T] map, with the custom-mask editor"; }
    void draw(ViewContext& context) override;
};

void MatrixView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const int layer = state.layer;
    const int head = state.head;
    const std::shared_ptr<const Matrix> map = shown.head_map(layer, head);
    const Matrix& weights = *map;
    ImGui::Text("Head %d.%d%s", layer, head, state.disabled_heads.off(layer, head) ? "  (disabled: zero context)" : "");
    if (const HeadCaption caption = context.head_caption(layer, head); !caption.text.empty()) {
        ImGui::TextWrapped("%s", caption.text.c_str());
    }
    colour_legend(state.colormap, "0", state.scale == HeatScale::per_head ? "head max" : "1", true,
                  !std::isfinite(weights.sum()));
    // A local layer's sliding window, apart from the causal triangle.
    const Eigen::Index window = shown.trace.layers[static_cast<std::size_t>(layer)].window;
    if (window > 0) window_legend(window);
    ImGui::Checkbox("Edit mask", &state.editing_mask);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click or drag over cells to forbid / allow query -> key pairs");
    ImGui::SameLine();
    if (ImGui::Button("Clear mask")) clear_mask(state);
    ImGui::SameLine();
    if (ImGui::Button("Invert mask")) invert_mask(state, static_cast<int>(shown.input.labels.size()));
    ImGui::SameLine();
    ImGui::TextDisabled(state.editing_mask ? "drag over cells to forbid (right button: allow)"
                                           : "rows: queries, columns: keys; click a row to pin it");
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const HeatmapLabels labels{shown.input.labels, shown.input.labels};
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const int clicked = draw_heatmap("matrix", weights, shown.head_scores(layer, head), context.mask(),
                                     context.weights_texture(numbered("w", layer, head), weights), labels,
                                     std::min(available.x, available.y), state.editing_mask ? -1 : state.query);
    if (window > 0) {
        const HeatmapGeometry g = heatmap_geometry(weights, labels, std::min(available.x, available.y), before);
        draw_window_band(g.min, g.cell, weights.rows(), weights.cols(), window);
    }
    if (state.editing_mask) {
        // The cell under the mouse while a button is held: left forbids, right allows.
        const ImGuiIO& io = ImGui::GetIO();
        const HeatmapGeometry g = heatmap_geometry(weights, labels, std::min(available.x, available.y), before);
        const bool inside = io.MousePos.x >= g.min.x && io.MousePos.y >= g.min.y &&
                            io.MousePos.x < g.min.x + g.cell * static_cast<float>(weights.cols()) &&
                            io.MousePos.y < g.min.y + g.cell * static_cast<float>(weights.rows()) &&
                            // The map's own button is the active item while a mouse button
                            // is held on it: hovering counts through it, or no drag would.
                            ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
        const int j = cell_under(io.MousePos.x, g.min.x, g.cell, static_cast<int>(weights.cols()));
        const int i = cell_under(io.MousePos.y, g.min.y, g.cell, static_cast<int>(weights.rows()));
        if (inside && ImGui::IsMouseDown(ImGuiMouseButton_Left)) set_forbidden(state, i, j, true);
        if (inside && ImGui::IsMouseDown(ImGuiMouseButton_Right)) set_forbidden(state, i, j, false);
    } else if (clicked >= 0) {
        state.query = clicked == state.query ? -1 : clicked;
    }
}

std::unique_ptr<View> make_matrix_view() { return std::make_unique<MatrixView>(); }

}   // namespace headscope::ui
