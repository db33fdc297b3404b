#include "ui/views/model_view.h"

#include "ui/views/metric_widgets.h"
#include "ui/views/view_context.h"
#include "ui/widgets/cell_under.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/job_progress.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

namespace headscope::ui {

using namespace session;

void ModelView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const auto& layers = shown.trace.layers;
    const ModelInfo& info = shown.info;
    ImGui::TextUnformatted("Every layer (rows) x head (columns); click one to select it");
    ImGui::SameLine();
    ImGui::Checkbox("colour by", &state.grid_colour_by_metric);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(150.0f);
    combo_metric("##colour metric", state.metric);
    ImGui::SameLine();
    ImGui::Checkbox("sort each layer by it", &state.grid_sort_by_metric);
    const auto scan = context.importance();
    if (scan) {
        ImGui::SameLine();
        ImGui::Checkbox("importance instead", &state.grid_show_importance);
    }
    colour_legend(state.colormap, "0", "each head's max");
    const bool by_importance = scan && state.grid_show_importance;
    const bool colour = state.grid_colour_by_metric || by_importance;
    // The value each head is coloured and sorted by, and its range over all heads.
    const auto value_of = [&](int l, int h) -> std::optional<double> {
        if (by_importance) return static_cast<double>(scan->effect(l, h));
        return metric_value(shown.metrics[static_cast<std::size_t>(l * info.n_heads + h)], state.metric);
    };
    double low = INFINITY;
    double high = -INFINITY;
    for (int l = 0; l < static_cast<int>(info.n_layers); ++l) {
        for (int h = 0; h < static_cast<int>(info.n_heads); ++h) {
            if (const auto v = value_of(l, h); v && std::isfinite(*v)) {
                low = std::min(low, *v);
                high = std::max(high, *v);
            }
        }
    }
    if (colour) {
        ImGui::SameLine();
        char lo[32];
        char hi[32];
        std::snprintf(lo, sizeof lo, "%.3g", std::isfinite(low) ? low : 0.0);
        std::snprintf(hi, sizeof hi, "%.3g %s", std::isfinite(high) ? high : 0.0,
                      by_importance ? "importance" : std::string(metric_name(state.metric)).c_str());
        colour_legend(metric_colormap, lo, hi, false);
    }
    const double span = high > low ? high - low : 1.0;
    const float side =
        std::clamp((ImGui::GetContentRegionAvail().x - 60.0f) / static_cast<float>(info.n_heads) - 8.0f, 48.0f, 128.0f);
    for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
        ImGui::Text("L%d", l);
        std::vector<int> order(layers[static_cast<std::size_t>(l)].heads.size());
        std::iota(order.begin(), order.end(), 0);
        if (state.grid_sort_by_metric) {
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                return value_of(l, a).value_or(-INFINITY) > value_of(l, b).value_or(-INFINITY);
            });
        }
        for (std::size_t column = 0; column < order.size(); ++column) {
            const int h = order[column];
            ImGui::SameLine(column == 0 ? 40.0f : 0.0f);
            const Matrix& w = layers[static_cast<std::size_t>(l)].heads[static_cast<std::size_t>(h)].weights;
            // The max only when the texture is built: 144 maxima of T x T every frame cost more than the frame.
            const HeatmapTexture& t = context.textures().get(numbered("grid", l, h), [&] {
                return heatmap_mip_levels(w, context.mask(), state.colormap, std::max(w.maxCoeff(), 1e-12f));
            });
            if (draw_heatmap_thumbnail(numbered("g", l, h).c_str(), t, side, l == state.layer && h == state.head)) {
                state.layer = l;
                state.head = h;
            }
            const std::optional<double> value = value_of(l, h);
            if (colour && value && std::isfinite(*value)) {
                // A frame in the metric's colour: the grid reads as a map of the metric
                // while each thumbnail still shows its pattern.
                const ImVec2 a = ImGui::GetItemRectMin();
                const ImVec2 b = ImGui::GetItemRectMax();
                ImGui::GetWindowDrawList()->AddRect(ImVec2(a.x + 2.0f, a.y + 2.0f), ImVec2(b.x - 2.0f, b.y - 2.0f),
                                                    colour_of(metric_colormap, (*value - low) / span), 0.0f, 0, 5.0f);
            }
            const HeadCaption caption = context.head_caption(l, h);
            if (!caption.name.empty() && side >= 64.0f) {
                // The name on the thumbnail itself: the grid reads as "what each head does" at a glance.
                const ImVec2 a = ImGui::GetItemRectMin();
                const ImVec2 text_size = ImGui::CalcTextSize(caption.name.c_str());
                const float scale = std::min(1.0f, (side - 8.0f) / std::max(text_size.x, 1.0f));
                const float font_size = ImGui::GetFontSize() * std::max(scale, 0.6f);
                ImDrawList* draw = ImGui::GetWindowDrawList();
                const ImVec2 corner(a.x + 3.0f, a.y + side - font_size - 5.0f);
                draw->AddRectFilled(corner,
                                    ImVec2(std::min(corner.x + text_size.x * font_size / ImGui::GetFontSize() + 4.0f,
                                                    a.x + side - 3.0f),
                                           corner.y + font_size + 2.0f),
                                    IM_COL32(0, 0, 0, 170));
                draw->PushClipRect(a, ImVec2(a.x + side - 3.0f, a.y + side), true);
                draw->AddText(ImGui::GetFont(), font_size, ImVec2(corner.x + 2.0f, corner.y + 1.0f),
                              IM_COL32(255, 255, 255, 255), caption.name.c_str());
                draw->PopClipRect();
            }
            if (ImGui::IsItemHovered()) {
                std::string tip = "head " + head_name(l, h);
                if (!caption.text.empty()) tip.append(": ").append(caption.text);
                if (value) {
                    char number[48];
                    std::snprintf(number, sizeof number, "\n%s = %.4g",
                                  by_importance ? "importance" : std::string(metric_name(state.metric)).c_str(),
                                  *value);
                    tip += number;
                }
                ImGui::SetTooltip("%s", tip.c_str());
            }
        }
    }
}

}   // namespace headscope::ui
