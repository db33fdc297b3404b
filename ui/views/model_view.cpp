// The Model view: every head of every layer as a grid of thumbnails.

#include "ui/views/metric_widgets.h"
#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/cell_under.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/job_progress.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>

namespace headscope::ui {

using namespace session;

class ModelView final : public View {
public:
    std::string_view name() const override { return "model"; }
    const char* title() const override { return "Model"; }
    std::string_view summary() const override { return "every head of every layer as a grid of thumbnails"; }
    void draw(ViewContext& context) override;
    std::string settings() const override {
        SettingsWriter out;
        out.set("colour_by_metric", own_.colour_by_metric)
            .set("sort_by_metric", own_.sort_by_metric)
            .set("importance", own_.importance);
        return out.text();
    }
    std::string restore(const std::string& settings) override {
        return read_settings(settings, own_, [](SettingsReader& in, Settings& into) {
            in.read("colour_by_metric", into.colour_by_metric);
            in.read("sort_by_metric", into.sort_by_metric);
            in.read("importance", into.importance);
        });
    }

    // The metric itself is the window's (AppState::metric: the Heads view plots it too).
    struct Settings {
        bool colour_by_metric = false;   // each head framed in its metric's colour
        bool sort_by_metric = false;     // each layer's heads in the metric's order
        bool importance = false;         // the importance scan's values instead, once it ran
    };

private:
    Settings own_;
};

namespace {

// The value each head is coloured and sorted by (the importance scan's when `importance`
// is set, else the metric's), and its range over all heads.
struct GridValues {
    const Snapshot& shown;
    const std::vector<HeadMetrics>& metrics;   // ViewContext::head_metrics()
    Metric metric;
    const ImportanceScan* importance = nullptr;
    double low = INFINITY;
    double high = -INFINITY;

    std::optional<double> of(int l, int h) const {
        if (importance) return static_cast<double>(importance->effect(l, h));
        // Metrics end early while a run's numbers are still coming (Snapshot::numbers_pending).
        const auto at = static_cast<std::size_t>(l * shown.info.n_heads + h);
        if (at >= metrics.size()) return std::nullopt;
        return metric_value(metrics[at], metric);
    }
    double span() const { return high > low ? high - low : 1.0; }
};

GridValues grid_values(const Snapshot& shown, const std::vector<HeadMetrics>& metrics, Metric metric,
                       const ImportanceScan* importance) {
    GridValues values{shown, metrics, metric, importance};
    for (int l = 0; l < static_cast<int>(shown.info.n_layers); ++l) {
        for (int h = 0; h < static_cast<int>(shown.info.n_heads); ++h) {
            if (const auto v = values.of(l, h); v && std::isfinite(*v)) {
                values.low = std::min(values.low, *v);
                values.high = std::max(values.high, *v);
            }
        }
    }
    return values;
}

void draw_grid_options(AppState& state, ModelView::Settings& own, bool have_scan) {
    ImGui::TextUnformatted("Every layer (rows) x head (columns); click one to select it");
    // "colour by [metric]" stays together.
    same_line_if_fits(check_width("colour by") + ImGui::GetStyle().ItemSpacing.x + px(150.0f));
    ImGui::Checkbox("colour by", &own.colour_by_metric);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(150.0f));
    combo_metric("##colour metric", state.metric);
    same_line_if_fits(check_width("sort each layer by it"));
    ImGui::Checkbox("sort each layer by it", &own.sort_by_metric);
    if (have_scan) {
        same_line_if_fits(check_width("importance instead"));
        ImGui::Checkbox("importance instead", &own.importance);
    }
}

void draw_value_legend(const GridValues& values) {
    char lo[32];
    char hi[32];
    std::snprintf(lo, sizeof lo, "%.3g", std::isfinite(values.low) ? values.low : 0.0);
    std::snprintf(hi, sizeof hi, "%.3g %s", std::isfinite(values.high) ? values.high : 0.0,
                  values.importance ? "importance" : std::string(metric_name(values.metric)).c_str());
    colour_legend(metric_colormap, lo, hi, false);
}

// The name on the thumbnail itself (the last item, `side` px wide): the grid reads as
// "what each head does" at a glance.
void draw_name_on_thumbnail(const std::string& name, float side) {
    const ImVec2 a = ImGui::GetItemRectMin();
    const ImVec2 text_size = ImGui::CalcTextSize(name.c_str());
    const float scale = std::min(1.0f, (side - 8.0f) / std::max(text_size.x, 1.0f));
    const float font_size = ImGui::GetFontSize() * std::max(scale, 0.6f);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 corner(a.x + 3.0f, a.y + side - font_size - 5.0f);
    draw->AddRectFilled(
        corner,
        ImVec2(std::min(corner.x + text_size.x * font_size / ImGui::GetFontSize() + 4.0f, a.x + side - 3.0f),
               corner.y + font_size + 2.0f),
        IM_COL32(0, 0, 0, 170));
    draw->PushClipRect(a, ImVec2(a.x + side - 3.0f, a.y + side), true);
    draw->AddText(ImGui::GetFont(), font_size, ImVec2(corner.x + 2.0f, corner.y + 1.0f), IM_COL32(255, 255, 255, 255),
                  name.c_str());
    draw->PopClipRect();
}

// Under the last thumbnail (head h of layer l): a stripe in its key/value group's shade
// (groups alternate), and a cross over it when the head is switched off.
void draw_group_and_state(const ModelInfo& info, const AppState& state, int l, int h, float side, Eigen::Index T) {
    const ImVec2 a = ImGui::GetItemRectMin();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    // A local layer's window band, as the Matrix view draws it, while a row of cells is
    // still visible (one rectangle per row: a long input's would cost the frame).
    if (const Eigen::Index window = info.window_of(l); window > 0 && T > 0 && side / static_cast<float>(T) >= 1.0f) {
        draw_window_band(a, side / static_cast<float>(T), T, T, window);
    }
    if (info.group_size() > 1) {
        const bool even = info.group_of(h) % 2 == 0;
        draw->AddRectFilled(ImVec2(a.x + 2.0f, a.y + side - 4.0f), ImVec2(a.x + side - 2.0f, a.y + side - 1.0f),
                            even ? IM_COL32(255, 200, 60, 230) : IM_COL32(80, 200, 255, 230));
    }
    if (kind_disabled_heads(state).off(l, h)) {
        draw->AddRectFilled(a, ImVec2(a.x + side, a.y + side), IM_COL32(0, 0, 0, 120));
        draw->AddLine(ImVec2(a.x + 4.0f, a.y + 4.0f), ImVec2(a.x + side - 4.0f, a.y + side - 4.0f),
                      IM_COL32(255, 80, 80, 230), 2.0f);
        draw->AddLine(ImVec2(a.x + side - 4.0f, a.y + 4.0f), ImVec2(a.x + 4.0f, a.y + side - 4.0f),
                      IM_COL32(255, 80, 80, 230), 2.0f);
    }
}

// The row's label: the layer, and for a model with sliding windows whether it is local
// (its window) or global.
void draw_layer_label(const ModelInfo& info, int l) {
    ImGui::BeginGroup();
    ImGui::Text("L%d", l);
    if (info.has_local_layers()) {
        const Eigen::Index window = info.window_of(l);
        if (window > 0) {
            ImGui::TextDisabled("W%ld", static_cast<long>(window));
        } else {
            ImGui::TextDisabled("all");
        }
    }
    ImGui::EndGroup();
    if (ImGui::IsItemHovered() && info.has_local_layers()) {
        const Eigen::Index window = info.window_of(l);
        if (window > 0) {
            ImGui::SetTooltip("Layer %d is local: each query sees its %ld latest keys (sliding window)", l,
                              static_cast<long>(window));
        } else {
            ImGui::SetTooltip("Layer %d is global: each query sees every key the mask allows", l);
        }
    }
}

// The columns' labels (H0, H1, ...) over the grid, where the thumbnails start (x = 40);
// sorted by a metric, a column holds other heads in each layer, and each thumbnail says
// which (draw_grid_head).
void draw_head_labels(Eigen::Index n_heads, float side, bool sorted) {
    if (sorted) {
        ImGui::TextDisabled("each layer sorted: the number in a thumbnail's corner is its head");
        return;
    }
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float step = side + ImGui::GetStyle().ItemSpacing.x;
    for (Eigen::Index h = 0; h < n_heads; ++h) {
        std::string label("H");   // appended: GCC 12 mis-warns (-Wrestrict) on "literal" + std::string
        label.append(std::to_string(h));
        const float x =
            origin.x + px(40.0f) + static_cast<float>(h) * step + 0.5f * (side - ImGui::CalcTextSize(label.c_str()).x);
        ImGui::GetWindowDrawList()->AddText(ImVec2(x, origin.y), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
    }
    ImGui::Dummy(ImVec2(1.0f, ImGui::GetTextLineHeight()));
}

// One head's thumbnail: click to select it; framed in its value's colour when `colour`.
void draw_grid_head(ViewContext& context, const GridValues& values, bool colour, bool sorted, int l, int h,
                    float side) {
    session::AppState& state = context.state();
    const session::Snapshot& shown = context.shown();
    // The max only when the texture is built: 144 maxima of T x T every frame cost more than the frame.
    const session::ComputeProgress* landing = context.landing();
    const HeatmapTexture& t = context.textures().get(numbered("grid", l, h), [&] {
        if (landing != nullptr && l < landing->layers_done) {
            // A long run in progress: its layers done so far replace the last result's.
            const Matrix& pooled = (*landing->landed_thumbnails)[static_cast<std::size_t>(l * shown.info.n_heads + h)];
            return heatmap_mip_levels(pooled, nullptr, state.colormap, std::max(pooled.maxCoeff(), 1e-12f));
        }
        if (shown.maps_streamed) {
            // The run's max-pooled thumbnail: L x H maps are not computed again for a grid.
            const Matrix& pooled = shown.thumbnails[static_cast<std::size_t>(l * shown.info.n_heads + h)];
            return heatmap_mip_levels(pooled, nullptr, state.colormap, std::max(pooled.maxCoeff(), 1e-12f));
        }
        const std::shared_ptr<const Matrix> w = shown.head_map(l, h);
        return heatmap_mip_levels(*w, context.mask(), state.colormap, std::max(w->maxCoeff(), 1e-12f));
    });
    if (draw_heatmap_thumbnail(numbered("g", l, h).c_str(), t, side, l == state.layer && h == state.head)) {
        state.layer = l;
        state.head = h;
    }
    const std::optional<double> value = values.of(l, h);
    if (colour && value && std::isfinite(*value)) {
        // A frame in the metric's colour: the grid reads as a map of the metric
        // while each thumbnail still shows its pattern.
        const ImVec2 a = ImGui::GetItemRectMin();
        const ImVec2 b = ImGui::GetItemRectMax();
        ImGui::GetWindowDrawList()->AddRect(ImVec2(a.x + 2.0f, a.y + 2.0f), ImVec2(b.x - 2.0f, b.y - 2.0f),
                                            colour_of(metric_colormap, (*value - values.low) / values.span()), 0.0f, 0,
                                            5.0f);
    }
    const HeadCaption caption = context.head_caption(l, h);
    if (!caption.name.empty() && side >= px(64.0f)) draw_name_on_thumbnail(caption.name, side);
    if (sorted) {
        // Sorted, a column is no longer one head: the thumbnail names its own.
        const ImVec2 a = ImGui::GetItemRectMin();
        const std::string number = std::to_string(h);
        ImDrawList* draw = ImGui::GetWindowDrawList();
        const ImVec2 size = ImGui::CalcTextSize(number.c_str());
        draw->AddRectFilled(ImVec2(a.x + 2.0f, a.y + 2.0f), ImVec2(a.x + size.x + 8.0f, a.y + size.y + 4.0f),
                            IM_COL32(0, 0, 0, 170));
        draw->AddText(ImVec2(a.x + 5.0f, a.y + 3.0f), IM_COL32(255, 255, 255, 255), number.c_str());
    }
    const ModelInfo& info = context.shown().info;
    draw_group_and_state(info, state, l, h, side, shown.input.embeddings.rows());
    if (ImGui::IsItemHovered()) {
        std::string tip = "head " + head_name(l, h);
        if (info.group_size() > 1) {
            tip += " (key/value group " + std::to_string(info.group_of(h)) + " of its layer: heads " +
                   std::to_string(info.group_of(h) * info.group_size()) + "-" +
                   std::to_string((info.group_of(h) + 1) * info.group_size() - 1) + " share keys and values)";
        }
        if (kind_disabled_heads(state).off(l, h)) tip += "\ndisabled";
        if (!caption.text.empty()) tip.append(": ").append(caption.text);
        if (value) {
            char number[48];
            std::snprintf(number, sizeof number, "\n%s = %.4g",
                          values.importance ? "importance" : std::string(metric_name(values.metric)).c_str(), *value);
            tip += number;
        }
        ImGui::SetTooltip("%s", tip.c_str());
    }
}

}   // namespace

namespace {

// The heads' labels over the columns and each layer's row of thumbnails.
void draw_grid(ViewContext& context, const GridValues& values, bool colour, bool sorted, float side) {
    const session::Snapshot& shown = context.shown();
    const ModelInfo& info = shown.info;
    const auto& layers = shown.trace.layers;
    draw_head_labels(info.n_heads, side, sorted);
    for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
        draw_layer_label(info, l);
        std::vector<int> order(layers[static_cast<std::size_t>(l)].heads.size());
        std::iota(order.begin(), order.end(), 0);
        if (sorted) {
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                return values.of(l, a).value_or(-INFINITY) > values.of(l, b).value_or(-INFINITY);
            });
        }
        for (std::size_t column = 0; column < order.size(); ++column) {
            ImGui::SameLine(column == 0 ? px(40.0f) : 0.0f);
            draw_grid_head(context, values, colour, sorted, l, order[column], side);
        }
    }
}

}   // namespace

void ModelView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInfo& info = shown.info;
    const auto scan = context.importance();
    draw_grid_options(state, own_, scan != nullptr);
    colour_legend(state.colormap, "0", "each head's max");
    draw_landing_line(context);
    for (Eigen::Index l = 0; l < info.n_layers; ++l) {
        if (info.window_of(l) > 0) {
            window_legend(info.window_of(l));   // the first local layer's; families use one window
            break;
        }
    }
    const bool by_importance = scan && own_.importance;
    const bool colour = own_.colour_by_metric || by_importance;
    const GridValues values =
        grid_values(shown, context.head_metrics(), state.metric, by_importance ? scan.get() : nullptr);
    if (colour) {
        ImGui::SameLine();
        draw_value_legend(values);
    }
    // Thumbnails fill the width, down to a size that still shows a pattern; a grid wider than
    // that (many heads in a narrow window) scrolls sideways in a region of its own.
    const float side =
        std::clamp((ImGui::GetContentRegionAvail().x - px(60.0f)) / static_cast<float>(info.n_heads) - px(8.0f),
                   px(32.0f), px(256.0f));
    if (info.group_size() > 1) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%ld query heads share each key/value head: the stripe under a thumbnail marks its group",
                           static_cast<long>(info.group_size()));
        ImGui::PopStyleColor();
    }
    const float grid_width =
        px(40.0f) + static_cast<float>(info.n_heads) * (side + ImGui::GetStyle().ItemSpacing.x) + px(8.0f);
    const bool scrolls = grid_width > ImGui::GetContentRegionAvail().x;
    if (scrolls) ImGui::BeginChild("grid", ImVec2(0.0f, 0.0f), false, ImGuiWindowFlags_HorizontalScrollbar);
    draw_grid(context, values, colour, own_.sort_by_metric, side);
    if (scrolls) ImGui::EndChild();
}

std::unique_ptr<View> make_model_view() { return std::make_unique<ModelView>(); }

}   // namespace headscope::ui
