// The Heads view: head metrics: table, scatter, ablation effect, importance scan.

#include "core/analysis/ablation_effects.h"
#include "session/export_map.h"
#include "ui/views/view.h"

#include "ui/views/metric_widgets.h"
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

class HeadsView final : public View {
public:
    std::string_view name() const override { return "heads"; }
    const char* title() const override { return "Heads"; }
    std::string_view summary() const override {
        return "head metrics: table, scatter, ablation effect, importance scan";
    }
    void draw(ViewContext& context) override;

private:
    void draw_importance_scan_controls(ViewContext& context, const std::string& key,
                                       const std::shared_ptr<const ImportanceScan>& scan);
    void draw_importance_map(ViewContext& context, const ImportanceScan& scan, const std::string& key, float avail,
                             float plot_w, float plot_h);
    void draw_metrics_table(ViewContext& context, const ImportanceScan* scan);
    void draw_metric_scatter(ViewContext& context, float width, float height);
};

namespace {

// What the disabled heads do to the output.
void draw_ablation_effect(const Snapshot& shown) {
    if (shown.effect) {
        const OutputChange& e = *shown.effect;
        if (e.measure == EffectMeasure::kl_divergence) {
            ImGui::Text(shown.info.classifier
                            ? "Disabled heads move the class distribution by KL(intact || ablated) = %.4g nats"
                            : "Disabled heads move the prediction by KL(intact || ablated) = %.4g nats (mean over "
                              "positions)",
                        e.value);
        } else {
            ImGui::Text("Disabled heads change the final hidden states by %.2f%% (relative, Frobenius norm)",
                        100.0 * e.value);
        }
    } else if (shown.numbers_pending && shown.ablated) {
        ImGui::TextDisabled("Disabled heads: measuring how far they move the output...");
    } else {
        ImGui::TextDisabled(
            "No head disabled: tick \"disable\" beside a head (left panel) to see what its absence changes.");
    }
}

// The table's rows (indices into `metrics`) in the order of the column the user sorts by.
std::vector<int> sorted_metric_rows(const std::vector<HeadMetrics>& metrics, const ImportanceScan* scan) {
    std::vector<int> rows(metrics.size());
    std::iota(rows.begin(), rows.end(), 0);
    if (const ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs(); sort && sort->SpecsCount > 0) {
        const ImGuiTableColumnSortSpecs& spec = sort->Specs[0];
        const auto value = [&](int row) -> double {
            const int column = static_cast<int>(spec.ColumnUserID);
            if (column == 0) return row;
            if (column == metric_count + 1) {
                return scan->effect(metrics[static_cast<std::size_t>(row)].layer,
                                    metrics[static_cast<std::size_t>(row)].head);
            }
            return metric_value(metrics[static_cast<std::size_t>(row)], static_cast<Metric>(column - 1))
                .value_or(-INFINITY);
        };
        std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
            return spec.SortDirection == ImGuiSortDirection_Descending ? value(a) > value(b) : value(a) < value(b);
        });
    }
    return rows;
}

}   // namespace

void HeadsView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    ImGui::SetNextItemWidth(px(180.0f));
    combo_metric("metric", state.metric);
    ImGui::SameLine();
    ImGui::TextDisabled("%s", metric_description(state.metric));

    draw_ablation_effect(shown);

    // Importance scan: each head alone disabled, one after another.
    const std::string key = context.importance_key();
    const auto scan = context.importance();
    draw_importance_scan_controls(context, key, scan);

    draw_landing_line(context);
    const float avail = ImGui::GetContentRegionAvail().x;
    const float plot_w = std::min(px(520.0f), avail * 0.55f);
    // A short window keeps room for the table's rows.
    const float plot_h = std::clamp(ImGui::GetContentRegionAvail().y * 0.4f, px(140.0f), px(240.0f));
    draw_metric_scatter(context, plot_w, plot_h);
    if (scan) {
        ImGui::SameLine();
        draw_importance_map(context, *scan, key, avail, plot_w, plot_h);
    }

    ImGui::BeginDisabled(shown.numbers_pending);   // the metrics of the layers computed are on their way
    const bool copy = ImGui::SmallButton("Copy table");
    ImGui::EndDisabled();
    if (copy) {
        // Every metric of every head (and the importance when scanned), tab-separated: the
        // table's fields are numbers and names without commas.
        std::string table = session::heads_table_csv(shown, scan.get());
        std::replace(table.begin(), table.end(), ',', '\t');
        copy_to_clipboard(table);
    }
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(shown.numbers_pending ? "the heads' metrics are being measured"
                                                : "every head's metrics to the clipboard, to paste in a spreadsheet");
    draw_metrics_table(context, scan.get());
}

void HeadsView::draw_importance_scan_controls(ViewContext& context, const std::string& key,
                                              const std::shared_ptr<const ImportanceScan>& scan) {
    if (!context.shown().model_ref) {
        // An encoder-decoder's encoder or cross kind: the scan switches off the decoder's own heads.
        ImGui::TextDisabled("Head importance: scanned over the decoder's own heads (Attention: decoder)");
        return;
    }
    const auto scanning = context.scan_jobs().running();
    if (!scanning || scanning->first != key) {
        if (ImGui::Button(scan ? "Scan again" : "Scan head importance")) context.start_importance_scan();
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Disable each head alone, one after another, and measure how far the output moves "
                              "(Michel et al. 2019)");
        }
        ImGui::SameLine();
    }
    draw_job_progress(context.scan_jobs(), key, "scanning", context.importance_work());
    if (scan) {
        ImGui::SameLine();
        if (ImGui::Button("Show on the Model grid")) context.show_view("model", R"({"importance":true})");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The Model view, each head framed in its importance's colour");
    }
}

void HeadsView::draw_importance_map(ViewContext& context, const ImportanceScan& scan, const std::string& key,
                                    float avail, float plot_w, float plot_h) {
    session::AppState& state = context.state();
    const ModelInfo& info = context.shown().info;
    ImGui::BeginGroup();
    ImGui::TextWrapped("Importance (%s), layers x heads", scan.measure == EffectMeasure::kl_divergence
                                                              ? "KL of the output, nats"
                                                              : "relative change of the output");
    const float max = std::max(scan.effect.maxCoeff(), 1e-12f);
    const HeatmapTexture& t = context.textures().get(
        "importance-map" + key, [&] { return heatmap_mip_levels(scan.effect, nullptr, state.colormap, max); });
    const float cell = std::clamp(std::min((avail - plot_w - px(70.0f)) / static_cast<float>(info.n_heads),
                                           (plot_h - px(40.0f)) / static_cast<float>(info.n_layers)),
                                  px(6.0f), px(48.0f));
    // Layers named down the left, heads along the top, every one that has room.
    const float line = ImGui::GetTextLineHeight();
    const float band_left =
        ImGui::CalcTextSize(numbered("L", static_cast<int>(info.n_layers) - 1).c_str()).x + px(6.0f);
    const ImVec2 corner = ImGui::GetCursorScreenPos();
    const ImVec2 origin(corner.x + band_left, corner.y + line + px(2.0f));
    const ImVec2 size(cell * static_cast<float>(info.n_heads), cell * static_cast<float>(info.n_layers));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const int layer_step = std::max(1, static_cast<int>(std::ceil(line / cell)));
    for (int l = 0; l < static_cast<int>(info.n_layers); l += layer_step) {
        draw->AddText(ImVec2(corner.x, origin.y + cell * (static_cast<float>(l) + 0.5f) - 0.5f * line), text,
                      numbered("L", l).c_str());
    }
    const int head_step = std::max(
        1, static_cast<int>(std::ceil(
               (ImGui::CalcTextSize(numbered("H", static_cast<int>(info.n_heads) - 1).c_str()).x + px(4.0f)) / cell)));
    for (int h = 0; h < static_cast<int>(info.n_heads); h += head_step) {
        draw->AddText(ImVec2(origin.x + cell * static_cast<float>(h), corner.y), text, numbered("H", h).c_str());
    }
    draw->AddImage(t.id(), origin, ImVec2(origin.x + size.x, origin.y + size.y));
    ImGui::SetCursorScreenPos(origin);
    ImGui::InvisibleButton("importance", size);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const int h = cell_under(mouse.x, origin.x, cell, static_cast<int>(info.n_heads));
    const int l = cell_under(mouse.y, origin.y, cell, static_cast<int>(info.n_layers));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("head %d.%d: %.4g", l, h, scan.effect(l, h));
    if (ImGui::IsItemClicked()) {
        state.layer = l;
        state.head = h;
    }
    const ImVec2 sel(origin.x + cell * static_cast<float>(state.head),
                     origin.y + cell * static_cast<float>(state.layer));
    ImGui::GetWindowDrawList()->AddRect(sel, ImVec2(sel.x + cell, sel.y + cell), selected_ring, 0.0f, 0, 2.0f);
    char high[32];
    std::snprintf(high, sizeof high, "%.3g", max);
    colour_legend(state.colormap, "0", high, false);
    ImGui::EndGroup();
}

// Every head's numbers; click a row to select the head, click a header to sort.
void HeadsView::draw_metrics_table(ViewContext& context, const ImportanceScan* scan) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInfo& info = shown.info;
    const std::vector<HeadMetrics>& metrics = context.head_metrics();
    // Columns as wide as their numbers; a narrow window scrolls them sideways, the head's
    // name frozen at the left, rather than squeezing them under each other.
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_SizingFixedFit;
    // Heads that share keys and values (grouped-query attention) are told apart by their group.
    const bool grouped = info.group_size() > 1;
    const int columns = 1 + (grouped ? 1 : 0) + metric_count + (scan ? 1 : 0);
    // The rest of the view, but never under eight rows: a short window scrolls the view.
    const float height = std::max(ImGui::GetContentRegionAvail().y, 9.0f * ImGui::GetFrameHeightWithSpacing());
    // What the columns take side by side (a header, or a number, and the padding): the
    // width the table scrolls over when the view is narrower.
    const float number = ImGui::CalcTextSize("-00.0000").x;
    float columns_width = 0.0f;
    const auto column_width = [&](const char* header) {
        columns_width += std::max(number, ImGui::CalcTextSize(header).x + px(14.0f)) + px(12.0f);
    };
    column_width("head");
    if (grouped) column_width("kv group");
    for (int k = 0; k < metric_count; ++k) column_width(std::string(metric_name(static_cast<Metric>(k))).c_str());
    if (scan) column_width("importance");
    if (!ImGui::BeginTable("metrics", columns, flags, ImVec2(0.0f, height), columns_width)) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("head", ImGuiTableColumnFlags_DefaultSort, 0.0f, 0);
    if (grouped) {
        ImGui::TableSetupColumn("kv group", ImGuiTableColumnFlags_NoSort, 0.0f, static_cast<ImGuiID>(metric_count + 2));
    }
    for (int k = 0; k < metric_count; ++k) {
        ImGui::TableSetupColumn(std::string(metric_name(static_cast<Metric>(k))).c_str(), 0, 0.0f,
                                static_cast<ImGuiID>(k + 1));
    }
    if (scan) ImGui::TableSetupColumn("importance", 0, 0.0f, static_cast<ImGuiID>(metric_count + 1));
    ImGui::TableHeadersRow();
    for (const int row : sorted_metric_rows(metrics, scan)) {
        const HeadMetrics& m = metrics[static_cast<std::size_t>(row)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const bool selected = m.layer == state.layer && m.head == state.head;
        if (ImGui::Selectable(head_name(m.layer, m.head).c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
            state.layer = m.layer;
            state.head = m.head;
        }
        if (ImGui::IsItemHovered() && !info.head_roles.empty()) {
            const std::string& role =
                info.head_roles[static_cast<std::size_t>(m.layer)][static_cast<std::size_t>(m.head)];
            if (!role.empty()) ImGui::SetTooltip("%s", role.c_str());
        }
        if (grouped) {
            ImGui::TableNextColumn();
            ImGui::Text("%d.%ld", m.layer, static_cast<long>(info.group_of(m.head)));
            if (ImGui::IsItemHovered()) {
                ImGui::SetTooltip("Layer %d's key/value head %ld, shared by %ld query heads", m.layer,
                                  static_cast<long>(info.group_of(m.head)), static_cast<long>(info.group_size()));
            }
        }
        for (int k = 0; k < metric_count; ++k) {
            ImGui::TableNextColumn();
            if (const auto v = metric_value(m, static_cast<Metric>(k))) {
                ImGui::Text("%.3f", *v);
            } else {
                ImGui::TextDisabled("-");
            }
        }
        if (scan) {
            ImGui::TableNextColumn();
            ImGui::Text("%.4g", scan->effect(m.layer, m.head));
        }
    }
    ImGui::EndTable();
}

void HeadsView::draw_metric_scatter(ViewContext& context, float width, float height) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    // Metric (up) against layer (across), one dot per head, as the ViT paper's Fig. 7
    // plots mean attention distance.
    const ModelInfo& info = shown.info;
    const std::vector<HeadMetrics>& metrics = context.head_metrics();
    const auto [low, high] = metric_range(metrics, state.metric);
    const double span = high > low ? high - low : 1.0;
    ImGui::BeginGroup();
    ImGui::Text("%s by layer (one dot per head; click to select)", std::string(metric_name(state.metric)).c_str());
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    char high_text[32];
    char low_text[32];
    std::snprintf(high_text, sizeof high_text, "%.3g", high);
    std::snprintf(low_text, sizeof low_text, "%.3g", low);
    // The axis's numbers beside the plot, not over it.
    const float left = std::max(ImGui::CalcTextSize(high_text).x, ImGui::CalcTextSize(low_text).x) + px(6.0f);
    const float bottom = px(22.0f);
    const ImVec2 p0(origin.x + left, origin.y + px(6.0f));
    const ImVec2 p1(origin.x + width - px(8.0f), origin.y + height - bottom);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRect(p0, p1, axis_colour);
    draw->AddText(ImVec2(origin.x, p0.y - px(2.0f)), axis_colour, high_text);
    draw->AddText(ImVec2(origin.x, p1.y - ImGui::GetTextLineHeight()), axis_colour, low_text);
    char text[32];
    const int L = static_cast<int>(info.n_layers);
    const auto x_of = [&](int layer, int head) {
        // Heads of a layer spread a little around its column, so they do not hide each other.
        const float column = (p1.x - p0.x) / static_cast<float>(L);
        const float spread = column * 0.6f;
        const float offset =
            info.n_heads > 1 ? spread * (static_cast<float>(head) / static_cast<float>(info.n_heads - 1) - 0.5f) : 0.0f;
        return p0.x + column * (static_cast<float>(layer) + 0.5f) + offset;
    };
    // Every layer's name while they fit side by side, else every second, third, ...
    std::snprintf(text, sizeof text, "L%d", L - 1);
    const float widest = ImGui::CalcTextSize(text).x + px(6.0f);
    const float column = (p1.x - p0.x) / static_cast<float>(L);
    const int every = std::max(1, static_cast<int>(std::ceil(widest / std::max(column, 1.0f))));
    for (int l = 0; l < L; l += every) {
        const float x = x_of(l, static_cast<int>(info.n_heads - 1) / 2);
        std::snprintf(text, sizeof text, "L%d", l);
        draw->AddText(ImVec2(x - 0.5f * ImGui::CalcTextSize(text).x, p1.y + px(3.0f)), axis_colour, text);
    }
    ImGui::InvisibleButton("scatter", ImVec2(width, height));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    int nearest = -1;
    float nearest_d = px(8.0f) * px(8.0f);   // within 8 px at 1x
    for (std::size_t n = 0; n < metrics.size(); ++n) {
        const HeadMetrics& m = metrics[n];
        const auto v = metric_value(m, state.metric);
        if (!v || !std::isfinite(*v)) continue;
        const ImVec2 p(x_of(m.layer, m.head),
                       p1.y - static_cast<float>((*v - low) / span) * (p1.y - p0.y - px(8.0f)) - px(4.0f));
        const bool selected = m.layer == state.layer && m.head == state.head;
        draw->AddCircleFilled(p, px(selected ? 5.5f : 4.0f), colour_of(state.colormap, (*v - low) / span));
        if (selected) draw->AddCircle(p, px(7.0f), selected_ring, 0, px(2.0f));
        const float d = (p.x - mouse.x) * (p.x - mouse.x) + (p.y - mouse.y) * (p.y - mouse.y);
        if (d < nearest_d) {
            nearest_d = d;
            nearest = static_cast<int>(n);
        }
    }
    if (hovered && nearest >= 0) {
        const HeadMetrics& m = metrics[static_cast<std::size_t>(nearest)];
        ImGui::SetTooltip("head %d.%d: %.4g", m.layer, m.head, metric_value(m, state.metric).value_or(NAN));
        if (clicked) {
            state.layer = m.layer;
            state.head = m.head;
        }
    }
    ImGui::EndGroup();
}

std::unique_ptr<View> make_heads_view() { return std::make_unique<HeadsView>(); }

}   // namespace headscope::ui
