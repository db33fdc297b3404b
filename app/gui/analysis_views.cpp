// The analysis views of the window (issue 6): the Heads view (metrics table, scatter,
// ablation effect and the head-importance scan), the Rollout view, the Similarity view
// (divergence matrix in clustering order, and the 2-D map of heads), and the Model
// grid coloured and sorted by a metric. What they show is computed in core/ (head
// metrics with every result on the worker; similarity, importance and rollout on
// BackgroundJobs); here it is only drawn.

#include "app/gui/app_window.h"

#include "app/gui/draw_helpers.h"
#include "core/analysis/ablation_effects.h"
#include "core/analysis/head_similarity.h"
#include "core/analysis/rollout.h"
#include "core/render/heatmap_image.h"
#include "ui/cell_under.h"
#include "ui/heatmap_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

namespace headscope::gui {

namespace {

constexpr ImU32 axis_colour = IM_COL32(150, 150, 150, 255);
constexpr ImU32 selected_ring = IM_COL32(255, 255, 255, 255);

const char* metric_description(Metric metric) {
    switch (metric) {
    case Metric::entropy: return "mean entropy of the query rows, in nats (high: spread out)";
    case Metric::entropy_norm: return "entropy / ln(allowed keys): 0 = one key, 1 = uniform";
    case Metric::mean_distance:
        return "mean attention distance: tokens for text, pixels between patch centres for images";
    case Metric::max_weight: return "mean of each row's largest weight";
    case Metric::top_k_mass: return "mean mass on each row's 5 largest weights";
    case Metric::sink_mass: return "mean weight on the first token / [CLS] (attention sink)";
    case Metric::special_mass: return "mean mass on special tokens ([CLS], [SEP], ...)";
    case Metric::diag: return "mean weight on itself";
    case Metric::prev_token: return "mean weight on the previous token";
    case Metric::induction: return "mean weight on the token after an earlier copy of this token (repeats only)";
    }
    return "";
}

std::string head_name(int layer, int head) {
    std::string s = std::to_string(layer);
    s += '.';
    s += std::to_string(head);
    return s;
}

// The range of a metric over all heads (finite values only); {0, 1} when none.
std::pair<double, double> metric_range(const std::vector<HeadMetrics>& metrics, Metric metric) {
    double low = INFINITY;
    double high = -INFINITY;
    for (const HeadMetrics& m : metrics) {
        if (const auto v = metric_value(m, metric); v && std::isfinite(*v)) {
            low = std::min(low, *v);
            high = std::max(high, *v);
        }
    }
    if (!std::isfinite(low)) return {0.0, 1.0};
    return {low, high};
}

ImU32 colour_of(Colormap map, double t) {
    const Rgba8 c = colormap_lookup(map, static_cast<float>(std::clamp(t, 0.0, 1.0)));
    return IM_COL32(c.r, c.g, c.b, 255);
}

bool combo_metric(const char* label, Metric& metric) {
    bool changed = false;
    if (ImGui::BeginCombo(label, std::string(metric_name(metric)).c_str())) {
        for (int k = 0; k < metric_count; ++k) {
            const auto m = static_cast<Metric>(k);
            if (ImGui::Selectable(std::string(metric_name(m)).c_str(), m == metric)) {
                metric = m;
                changed = true;
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", metric_description(m));
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", metric_description(metric));
    return changed;
}

}   // namespace

std::string AppWindow::importance_key() const {
    // The scan depends on the model, the input and the mask (all in the snapshot's input
    // key), never on the disabled heads.
    return "importance " + shown_->input_key;
}

BackgroundJobs::Work AppWindow::importance_work() const {
    const std::shared_ptr<const Snapshot> snapshot = shown_;
    return [snapshot](const LoadControl& control) -> std::shared_ptr<const void> {
        RunOptions options = snapshot->options;
        options.disabled_heads.clear();
        return std::make_shared<const ImportanceScan>(
            importance_scan(*snapshot->model_ref, snapshot->input, options, control));
    };
}

void AppWindow::start_importance_scan() {
    if (!shown_ || showing_other_model()) return;
    scan_jobs_.restart(importance_key(), importance_work());
}

std::shared_ptr<const ImportanceScan> AppWindow::importance() const {
    if (!shown_) return nullptr;
    auto scan = scan_jobs_.result<ImportanceScan>(importance_key());
    // Never another model's shape (the key names the model; this is the guard for indexing).
    if (scan && (scan->effect.rows() != shown_->info.n_layers || scan->effect.cols() != shown_->info.n_heads))
        return nullptr;
    return scan;
}

void AppWindow::draw_job_progress(BackgroundJobs& jobs, const std::string& key, const char* what,
                                  const BackgroundJobs::Work& retry) {
    const auto running = jobs.running();
    if (running && running->first == key) {
        char overlay[48];
        std::snprintf(overlay, sizeof overlay, "%s %.0f%%", what, 100.0 * running->second);
        ImGui::ProgressBar(static_cast<float>(running->second), ImVec2(260.0f, 0.0f), overlay);
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

void AppWindow::draw_heads_view() {
    const ModelInfo& info = shown_->info;
    const std::vector<HeadMetrics>& metrics = shown_->metrics;
    ImGui::SetNextItemWidth(180.0f);
    combo_metric("metric", state_.metric);
    ImGui::SameLine();
    ImGui::TextDisabled("%s", metric_description(state_.metric));

    // What the disabled heads do to the output.
    if (shown_->effect) {
        const OutputChange& e = *shown_->effect;
        if (e.measure == EffectMeasure::kl_divergence) {
            ImGui::Text(info.classifier
                            ? "Disabled heads move the class distribution by KL(intact || ablated) = %.4g nats"
                            : "Disabled heads move the prediction by KL(intact || ablated) = %.4g nats (mean over "
                              "positions)",
                        e.value);
        } else {
            ImGui::Text("Disabled heads change the final hidden states by %.2f%% (relative, Frobenius norm)",
                        100.0 * e.value);
        }
    } else {
        ImGui::TextDisabled(
            "No head disabled: tick \"disable\" beside a head (left panel) to see what its absence changes.");
    }

    // Importance scan: each head alone disabled, one after another.
    const std::string key = importance_key();
    const auto scan = importance();
    const auto scanning = scan_jobs_.running();
    if (!scanning || scanning->first != key) {
        if (ImGui::Button(scan ? "Scan again" : "Scan head importance")) start_importance_scan();
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Disable each head alone, one after another, and measure how far the output moves "
                              "(Michel et al. 2019)");
        }
        ImGui::SameLine();
    }
    draw_job_progress(scan_jobs_, key, "scanning", importance_work());
    if (scan) {
        ImGui::SameLine();
        ImGui::Checkbox("colour the Model grid by importance", &state_.grid_show_importance);
    }

    const float avail = ImGui::GetContentRegionAvail().x;
    const float plot_w = std::min(520.0f, avail * 0.55f);
    const float plot_h = 240.0f;
    draw_metric_scatter(plot_w, plot_h);
    if (scan) {
        ImGui::SameLine();
        ImGui::BeginGroup();
        ImGui::Text("Importance (%s), layers x heads", scan->measure == EffectMeasure::kl_divergence
                                                           ? "KL of the output, nats"
                                                           : "relative change of the output");
        const float max = std::max(scan->effect.maxCoeff(), 1e-12f);
        const ui::HeatmapTexture& t = textures_.get("importance-map" + key, [&] {
            return ui::heatmap_mip_levels(scan->effect, nullptr, state_.colormap, max);
        });
        const float cell = std::clamp(std::min((avail - plot_w - 40.0f) / static_cast<float>(info.n_heads),
                                               (plot_h - 20.0f) / static_cast<float>(info.n_layers)),
                                      6.0f, 48.0f);
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        const ImVec2 size(cell * static_cast<float>(info.n_heads), cell * static_cast<float>(info.n_layers));
        ImGui::GetWindowDrawList()->AddImage(t.id(), origin, ImVec2(origin.x + size.x, origin.y + size.y));
        ImGui::InvisibleButton("importance", size);
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        const int h = ui::cell_under(mouse.x, origin.x, cell, static_cast<int>(info.n_heads));
        const int l = ui::cell_under(mouse.y, origin.y, cell, static_cast<int>(info.n_layers));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("head %d.%d: %.4g", l, h, scan->effect(l, h));
        if (ImGui::IsItemClicked()) {
            state_.layer = l;
            state_.head = h;
        }
        const ImVec2 sel(origin.x + cell * static_cast<float>(state_.head),
                         origin.y + cell * static_cast<float>(state_.layer));
        ImGui::GetWindowDrawList()->AddRect(sel, ImVec2(sel.x + cell, sel.y + cell), selected_ring, 0.0f, 0, 2.0f);
        char high[32];
        std::snprintf(high, sizeof high, "%.3g", max);
        colour_legend(state_.colormap, "0", high, false);
        ImGui::EndGroup();
    }

    // Every head's numbers; click a row to select the head, click a header to sort.
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_SizingFixedFit;
    const int columns = 1 + metric_count + (scan ? 1 : 0);
    if (!ImGui::BeginTable("metrics", columns, flags, ImVec2(0.0f, ImGui::GetContentRegionAvail().y))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("head", ImGuiTableColumnFlags_DefaultSort, 0.0f, 0);
    for (int k = 0; k < metric_count; ++k) {
        ImGui::TableSetupColumn(std::string(metric_name(static_cast<Metric>(k))).c_str(), 0, 0.0f,
                                static_cast<ImGuiID>(k + 1));
    }
    if (scan) ImGui::TableSetupColumn("importance", 0, 0.0f, static_cast<ImGuiID>(metric_count + 1));
    ImGui::TableHeadersRow();
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
    for (const int row : rows) {
        const HeadMetrics& m = metrics[static_cast<std::size_t>(row)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        const bool selected = m.layer == state_.layer && m.head == state_.head;
        if (ImGui::Selectable(head_name(m.layer, m.head).c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
            state_.layer = m.layer;
            state_.head = m.head;
        }
        if (ImGui::IsItemHovered() && !info.head_roles.empty()) {
            const std::string& role =
                info.head_roles[static_cast<std::size_t>(m.layer)][static_cast<std::size_t>(m.head)];
            if (!role.empty()) ImGui::SetTooltip("%s", role.c_str());
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

void AppWindow::draw_metric_scatter(float width, float height) {
    // Metric (up) against layer (across), one dot per head, as the ViT paper's Fig. 7
    // plots mean attention distance.
    const ModelInfo& info = shown_->info;
    const std::vector<HeadMetrics>& metrics = shown_->metrics;
    const auto [low, high] = metric_range(metrics, state_.metric);
    const double span = high > low ? high - low : 1.0;
    ImGui::BeginGroup();
    ImGui::Text("%s by layer (one dot per head; click to select)", std::string(metric_name(state_.metric)).c_str());
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float left = 48.0f;
    const float bottom = 22.0f;
    const ImVec2 p0(origin.x + left, origin.y + 6.0f);
    const ImVec2 p1(origin.x + width - 8.0f, origin.y + height - bottom);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRect(p0, p1, axis_colour);
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", high);
    draw->AddText(ImVec2(origin.x, p0.y - 2.0f), axis_colour, text);
    std::snprintf(text, sizeof text, "%.3g", low);
    draw->AddText(ImVec2(origin.x, p1.y - 14.0f), axis_colour, text);
    const int L = static_cast<int>(info.n_layers);
    const auto x_of = [&](int layer, int head) {
        // Heads of a layer spread a little around its column, so they do not hide each other.
        const float column = (p1.x - p0.x) / static_cast<float>(L);
        const float spread = column * 0.6f;
        const float offset =
            info.n_heads > 1 ? spread * (static_cast<float>(head) / static_cast<float>(info.n_heads - 1) - 0.5f) : 0.0f;
        return p0.x + column * (static_cast<float>(layer) + 0.5f) + offset;
    };
    for (int l = 0; l < L; ++l) {
        const float x = x_of(l, static_cast<int>(info.n_heads - 1) / 2);
        std::snprintf(text, sizeof text, "L%d", l);
        if (L <= 16 || l % 2 == 0) draw->AddText(ImVec2(x - 8.0f, p1.y + 3.0f), axis_colour, text);
    }
    ImGui::InvisibleButton("scatter", ImVec2(width, height));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    int nearest = -1;
    float nearest_d = 64.0f;   // within 8 px
    for (std::size_t n = 0; n < metrics.size(); ++n) {
        const HeadMetrics& m = metrics[n];
        const auto v = metric_value(m, state_.metric);
        if (!v || !std::isfinite(*v)) continue;
        const ImVec2 p(x_of(m.layer, m.head),
                       p1.y - static_cast<float>((*v - low) / span) * (p1.y - p0.y - 8.0f) - 4.0f);
        const bool selected = m.layer == state_.layer && m.head == state_.head;
        draw->AddCircleFilled(p, selected ? 5.5f : 4.0f, colour_of(state_.colormap, (*v - low) / span));
        if (selected) draw->AddCircle(p, 7.0f, selected_ring, 0, 2.0f);
        const float d = (p.x - mouse.x) * (p.x - mouse.x) + (p.y - mouse.y) * (p.y - mouse.y);
        if (d < nearest_d) {
            nearest_d = d;
            nearest = static_cast<int>(n);
        }
    }
    if (hovered && nearest >= 0) {
        const HeadMetrics& m = metrics[static_cast<std::size_t>(nearest)];
        ImGui::SetTooltip("head %d.%d: %.4g", m.layer, m.head, metric_value(m, state_.metric).value_or(NAN));
        if (clicked) {
            state_.layer = m.layer;
            state_.head = m.head;
        }
    }
    ImGui::EndGroup();
}

void AppWindow::draw_model_view() {
    const auto& layers = shown_->trace.layers;
    const ModelInfo& info = shown_->info;
    ImGui::TextUnformatted("Every layer (rows) x head (columns); click one to select it");
    ImGui::SameLine();
    ImGui::Checkbox("colour by", &state_.grid_colour_by_metric);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(150.0f);
    combo_metric("##colour metric", state_.metric);
    ImGui::SameLine();
    ImGui::Checkbox("sort each layer by it", &state_.grid_sort_by_metric);
    const auto scan = importance();
    if (scan) {
        ImGui::SameLine();
        ImGui::Checkbox("importance instead", &state_.grid_show_importance);
    }
    colour_legend(state_.colormap, "0", "each head's max");
    const bool by_importance = scan && state_.grid_show_importance;
    const bool colour = state_.grid_colour_by_metric || by_importance;
    // The value each head is coloured and sorted by, and its range over all heads.
    const auto value_of = [&](int l, int h) -> std::optional<double> {
        if (by_importance) return static_cast<double>(scan->effect(l, h));
        return metric_value(shown_->metrics[static_cast<std::size_t>(l * info.n_heads + h)], state_.metric);
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
                      by_importance ? "importance" : std::string(metric_name(state_.metric)).c_str());
        colour_legend(metric_colormap, lo, hi, false);
    }
    const double span = high > low ? high - low : 1.0;
    const float side =
        std::clamp((ImGui::GetContentRegionAvail().x - 60.0f) / static_cast<float>(info.n_heads) - 8.0f, 48.0f, 128.0f);
    for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
        ImGui::Text("L%d", l);
        std::vector<int> order(layers[static_cast<std::size_t>(l)].heads.size());
        std::iota(order.begin(), order.end(), 0);
        if (state_.grid_sort_by_metric) {
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                return value_of(l, a).value_or(-INFINITY) > value_of(l, b).value_or(-INFINITY);
            });
        }
        for (std::size_t column = 0; column < order.size(); ++column) {
            const int h = order[column];
            ImGui::SameLine(column == 0 ? 40.0f : 0.0f);
            const Matrix& w = layers[static_cast<std::size_t>(l)].heads[static_cast<std::size_t>(h)].weights;
            // The max only when the texture is built: 144 maxima of T x T every frame cost more than the frame.
            const ui::HeatmapTexture& t = textures_.get(numbered("grid", l, h), [&] {
                return ui::heatmap_mip_levels(w, mask(), state_.colormap, std::max(w.maxCoeff(), 1e-12f));
            });
            if (ui::draw_heatmap_thumbnail(numbered("g", l, h).c_str(), t, side,
                                           l == state_.layer && h == state_.head)) {
                state_.layer = l;
                state_.head = h;
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
            const HeadCaption caption = head_caption(l, h);
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
                                  by_importance ? "importance" : std::string(metric_name(state_.metric)).c_str(),
                                  *value);
                    tip += number;
                }
                ImGui::SetTooltip("%s", tip.c_str());
            }
        }
    }
}

std::string AppWindow::rollout_key() const {
    const RolloutOptions& o = state_.rollout;
    char text[96];
    std::snprintf(text, sizeof text, "rollout %llu %d %.4f %d %d", static_cast<unsigned long long>(shown_->generation),
                  static_cast<int>(o.fusion), o.discard_ratio, o.start_layer, o.end_layer);
    return text;
}

void AppWindow::draw_rollout_view() {
    const ModelInfo& info = shown_->info;
    const ModelInput& input = shown_->input;
    const int L = static_cast<int>(info.n_layers);
    RolloutOptions& o = state_.rollout;
    int fusion = static_cast<int>(o.fusion);
    ImGui::SetNextItemWidth(110.0f);
    if (ImGui::Combo("head fusion", &fusion, "mean\0max\0min\0")) o.fusion = static_cast<HeadFusion>(fusion);
    ImGui::SameLine();
    float discard = static_cast<float>(o.discard_ratio);
    ImGui::SetNextItemWidth(160.0f);
    if (ImGui::SliderFloat("discard ratio", &discard, 0.0f, 0.99f, "%.2f", ImGuiSliderFlags_AlwaysClamp)) {
        o.discard_ratio = std::clamp(discard, 0.0f, 0.99f);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Drop this fraction of each layer's lowest fused weights (never [CLS]'s own)");
    ImGui::SameLine();
    int end = o.end_layer < 0 ? L - 1 : o.end_layer;
    ImGui::SetNextItemWidth(120.0f);
    ImGui::SliderInt("from layer", &o.start_layer, 0, L - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(120.0f);
    if (ImGui::SliderInt("to layer", &end, 0, L - 1, "%d", ImGuiSliderFlags_AlwaysClamp)) {
        end = std::clamp(end, 0, L - 1);
        o.end_layer = end == L - 1 ? -1 : end;
    }
    o.start_layer = std::clamp(o.start_layer, 0, L - 1);
    if (o.end_layer >= 0 && o.end_layer < o.start_layer) o.end_layer = o.start_layer;

    const std::string key = rollout_key();
    const std::shared_ptr<const Snapshot> snapshot = shown_;
    RolloutOptions options = o;
    options.disabled_heads = snapshot->options.disabled_heads;
    const BackgroundJobs::Work work = [snapshot, options](const LoadControl&) -> std::shared_ptr<const void> {
        return std::make_shared<const Matrix>(attention_rollout(snapshot->trace, options));
    };
    view_jobs_.start(key, work);
    draw_job_progress(view_jobs_, key, "rollout", work);
    const auto rollout = view_jobs_.result<Matrix>(key);
    if (rollout) {
        rollout_shown_ = rollout;
        rollout_shown_generation_ = shown_->generation;
    }
    // While a slider moves, the last rollout of this result stays up.
    const std::shared_ptr<const Matrix> shown_rollout =
        rollout_shown_generation_ == shown_->generation ? rollout_shown_ : nullptr;
    if (!shown_rollout) {
        ImGui::TextUnformatted("computing the rollout...");
        return;
    }
    const Matrix& R = *shown_rollout;
    const int T = static_cast<int>(R.rows());
    if (state_.rollout_query >= T) state_.rollout_query = -1;

    if (info.takes_image && input.grid_width > 0) {
        // [CLS]'s row over the patches (or the chosen patch's), as vit-explain draws it.
        const int row = state_.rollout_query >= 0 ? state_.rollout_query : 0;
        const int prefix = input.n_prefix_tokens;
        const int gw = input.grid_width;
        const int gh = input.grid_height;
        Matrix map(gh, gw);
        for (int n = 0; n < gw * gh; ++n) map(n / gw, n % gw) = R(row, prefix + n);
        const float max = std::max(map.maxCoeff(), 1e-12f);
        ImGui::Text("What %s draws on, through layers %d..%d (click a patch to follow it; [CLS] button to go back)",
                    input.labels[static_cast<std::size_t>(row)].c_str(), o.start_layer,
                    o.end_layer < 0 ? L - 1 : o.end_layer);
        colour_legend(state_.colormap, "0", "the map's max", false);
        const ui::HeatmapTexture& heat = textures_.get(key + " map " + std::to_string(row), [&] {
            return ui::heatmap_mip_levels(map, nullptr, state_.colormap, max);
        });
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        const auto [origin, width, height] =
            draw_picture_with_heat(heat, gw, gh, ImVec2(avail.x - 140.0f, avail.y - 10.0f));
        if (ImGui::InvisibleButton("rollout patches", ImVec2(width, height))) {
            const ImVec2 m = ImGui::GetIO().MousePos;
            const int gx = ui::cell_under(m.x, origin.x, width / static_cast<float>(gw), gw);
            const int gy = ui::cell_under(m.y, origin.y, height / static_cast<float>(gh), gh);
            state_.rollout_query = prefix + gy * gw + gx;
        }
        ImGui::SameLine();
        if (ImGui::Button("[CLS]")) state_.rollout_query = -1;
        return;
    }

    // Text: a bar over each token, for the row chosen.
    const bool causal = shown_->causal;
    const char* default_row = causal ? "the last token" : "every position (mean)";
    std::string current =
        state_.rollout_query < 0 ? default_row : input.labels[static_cast<std::size_t>(state_.rollout_query)];
    ImGui::SetNextItemWidth(240.0f);
    if (ImGui::BeginCombo("what draws on the tokens", current.c_str())) {
        if (ImGui::Selectable(default_row, state_.rollout_query < 0)) state_.rollout_query = -1;
        for (int i = 0; i < T; ++i) {
            const std::string label = std::to_string(i) + ": " + input.labels[static_cast<std::size_t>(i)];
            if (ImGui::Selectable(label.c_str(), state_.rollout_query == i)) state_.rollout_query = i;
        }
        ImGui::EndCombo();
    }
    RowVector bars;
    if (state_.rollout_query >= 0) {
        bars = R.row(state_.rollout_query);
    } else if (causal) {
        bars = R.row(T - 1);
    } else {
        bars = R.colwise().mean();
    }
    const float max = std::max(bars.maxCoeff(), 1e-12f);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("Rollout (Abnar & Zuidema 2020): the attention of layers %d..%d multiplied through the residual "
                       "stream. Bar height: share of %s drawn from each token.",
                       o.start_layer, o.end_layer < 0 ? L - 1 : o.end_layer, current.c_str());
    ImGui::PopStyleColor();
    const float bar_h = 90.0f;
    const float line = ImGui::GetTextLineHeight();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    float x = ImGui::GetCursorScreenPos().x;
    float y = ImGui::GetCursorScreenPos().y;
    const float right = x + ImGui::GetContentRegionAvail().x;
    const float start_x = x;
    for (int i = 0; i < T; ++i) {
        const std::string& label = input.labels[static_cast<std::size_t>(i)];
        const float w = std::max(ImGui::CalcTextSize(label.c_str()).x + 10.0f, 22.0f);
        if (x + w > right && x > start_x) {
            x = start_x;
            y += bar_h + line + 14.0f;
        }
        const float value = bars(i) / max;
        const float top = y + bar_h * (1.0f - value);
        draw->AddRectFilled(ImVec2(x + 2.0f, top), ImVec2(x + w - 2.0f, y + bar_h), colour_of(state_.colormap, value));
        draw->AddRect(ImVec2(x + 2.0f, y), ImVec2(x + w - 2.0f, y + bar_h), IM_COL32(80, 80, 80, 255));
        draw->AddText(ImVec2(x + 5.0f, y + bar_h + 3.0f), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
        ImGui::SetCursorScreenPos(ImVec2(x, y));
        ImGui::PushID(i);
        ImGui::InvisibleButton("bar", ImVec2(w, bar_h + line + 4.0f));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: %.4f", label.c_str(), bars(i));
        if (ImGui::IsItemClicked()) state_.rollout_query = i;
        ImGui::PopID();
        x += w;
    }
    ImGui::SetCursorScreenPos(ImVec2(start_x, y + bar_h + line + 14.0f));
    ImGui::Dummy(ImVec2(1.0f, 1.0f));
}

std::string AppWindow::similarity_key() const { return "similarity " + std::to_string(shown_->generation); }

void AppWindow::draw_similarity_view() {
    const std::string key = similarity_key();
    const std::shared_ptr<const Snapshot> snapshot = shown_;
    const BackgroundJobs::Work work = [snapshot](const LoadControl& control) -> std::shared_ptr<const void> {
        return std::make_shared<const HeadSimilarity>(head_similarity(snapshot->trace, {}, control));
    };
    view_jobs_.start(key, work);
    ImGui::TextUnformatted("How alike the heads attend on this input: Jensen-Shannon divergence between every pair of "
                           "heads (bits, mean over queries)");
    draw_job_progress(view_jobs_, key, "comparing heads", work);
    const auto similarity = view_jobs_.result<HeadSimilarity>(key);
    if (!similarity) return;
    const HeadSimilarity& s = *similarity;
    for (const auto& [l, h] : s.heads) {
        if (l >= shown_->info.n_layers || h >= shown_->info.n_heads) return;   // never another model's heads
    }
    const int N = static_cast<int>(s.heads.size());
    if (N == 0) return;

    // The matrix, rows and columns in the clustering's leaf order: blocks of heads that
    // attend alike sit together.
    const float side = std::clamp(
        std::min(ImGui::GetContentRegionAvail().x * 0.48f, ImGui::GetContentRegionAvail().y - 60.0f), 160.0f, 640.0f);
    const float max = std::max(s.divergence.maxCoeff(), 1e-12f);
    ImGui::BeginGroup();
    ImGui::TextUnformatted("divergence, heads in clustering order");
    const ui::HeatmapTexture& t = textures_.get(key + " matrix", [&] {
        Matrix ordered(N, N);
        for (int i = 0; i < N; ++i) {
            for (int j = 0; j < N; ++j)
                ordered(i, j) =
                    s.divergence(s.order[static_cast<std::size_t>(i)], s.order[static_cast<std::size_t>(j)]);
        }
        return ui::heatmap_mip_levels(ordered, nullptr, state_.colormap, max);
    });
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddImage(t.id(), origin, ImVec2(origin.x + side, origin.y + side));
    ImGui::InvisibleButton("divergence", ImVec2(side, side));
    const float cell = side / static_cast<float>(N);
    if (ImGui::IsItemHovered()) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int i = ui::cell_under(m.y, origin.y, cell, N);
        const int j = ui::cell_under(m.x, origin.x, cell, N);
        const auto a = s.heads[static_cast<std::size_t>(s.order[static_cast<std::size_t>(i)])];
        const auto b = s.heads[static_cast<std::size_t>(s.order[static_cast<std::size_t>(j)])];
        ImGui::SetTooltip("%d.%d vs %d.%d: %.4f bits", a.first, a.second, b.first, b.second,
                          s.divergence(s.order[static_cast<std::size_t>(i)], s.order[static_cast<std::size_t>(j)]));
        if (ImGui::IsItemClicked()) {
            state_.layer = a.first;
            state_.head = a.second;
        }
    }
    for (int i = 0; i < N; ++i) {
        const auto head = s.heads[static_cast<std::size_t>(s.order[static_cast<std::size_t>(i)])];
        if (head.first == state_.layer && head.second == state_.head) {
            ImDrawList* draw = ImGui::GetWindowDrawList();
            const float y = origin.y + cell * static_cast<float>(i);
            draw->AddRect(ImVec2(origin.x, y), ImVec2(origin.x + side, y + cell), selected_ring, 0.0f, 0, 1.5f);
        }
    }
    char high[32];
    std::snprintf(high, sizeof high, "%.3f bits", max);
    colour_legend(state_.colormap, "0 (alike)", high, false);
    ImGui::EndGroup();

    // The map of heads: classical MDS of the divergences (Clark et al. 2019), dots
    // coloured by layer; close dots attend alike.
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::TextUnformatted("map of heads (MDS), coloured by layer; click a dot");
    const ImVec2 o2 = ImGui::GetCursorScreenPos();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRect(o2, ImVec2(o2.x + side, o2.y + side), axis_colour);
    const Eigen::Index dims = s.mds.cols();
    float min_x = 0.0f;
    float max_x = 0.0f;
    float min_y = 0.0f;
    float max_y = 0.0f;
    if (dims >= 2) {
        min_x = s.mds.col(0).minCoeff();
        max_x = s.mds.col(0).maxCoeff();
        min_y = s.mds.col(1).minCoeff();
        max_y = s.mds.col(1).maxCoeff();
    }
    const float range = std::max({max_x - min_x, max_y - min_y, 1e-9f});
    const float pad = 14.0f;
    const auto point = [&](int n) {
        const float x = dims >= 1 ? s.mds(n, 0) : 0.0f;
        const float y = dims >= 2 ? s.mds(n, 1) : 0.0f;
        // One scale on both axes: distances on screen are divergences.
        return ImVec2(o2.x + pad + (x - min_x) / range * (side - 2 * pad),
                      o2.y + side - pad - (y - min_y) / range * (side - 2 * pad));
    };
    ImGui::InvisibleButton("head map", ImVec2(side, side));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    int nearest = -1;
    float nearest_d = 100.0f;
    const int L = static_cast<int>(shown_->info.n_layers);
    for (int n = 0; n < N; ++n) {
        const auto [l, h] = s.heads[static_cast<std::size_t>(n)];
        const ImVec2 p = point(n);
        const bool selected = l == state_.layer && h == state_.head;
        draw->AddCircleFilled(p, selected ? 6.0f : 4.5f,
                              colour_of(layer_colormap, L > 1 ? static_cast<double>(l) / (L - 1) : 0.5));
        draw->AddCircle(p, selected ? 6.5f : 5.0f, axis_colour);   // cividis' dark end on the dark background
        if (selected) draw->AddCircle(p, 8.0f, selected_ring, 0, 2.0f);
        const float d = (p.x - mouse.x) * (p.x - mouse.x) + (p.y - mouse.y) * (p.y - mouse.y);
        if (d < nearest_d) {
            nearest_d = d;
            nearest = n;
        }
    }
    if (hovered && nearest >= 0) {
        const auto [l, h] = s.heads[static_cast<std::size_t>(nearest)];
        ImGui::SetTooltip("head %d.%d", l, h);
        if (clicked) {
            state_.layer = l;
            state_.head = h;
        }
    }
    colour_legend(layer_colormap, "first layer", "last layer", false);
    ImGui::EndGroup();
}

}   // namespace headscope::gui
