// The Matrix view: one head's [T, T] map, with the custom-mask editor.

#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace headscope::ui {

using namespace session;

class MatrixView final : public View {
public:
    std::string_view name() const override { return "matrix"; }
    const char* title() const override { return "Matrix"; }
    std::string_view summary() const override { return "one head's [T, T] map, with the custom-mask editor"; }
    void draw(ViewContext& context) override;
    std::string settings() const override {
        SettingsWriter out;
        write_zoom(out, zoom_);
        out.set("edit_mask", editing_mask_);
        return out.text();
    }
    std::string restore(const std::string& settings) override {
        std::pair own{zoom_, editing_mask_};
        std::string why = read_settings(settings, own, [](SettingsReader& in, std::pair<MapZoom, bool>& into) {
            read_zoom(in, into.first);
            in.read("edit_mask", into.second);
        });
        std::tie(zoom_, editing_mask_) = own;
        return why;
    }
    // The mask being edited was the last model's positions': another model stops the
    // editing (the first keeps what a session or flag gave).
    void fit_to_model(const ModelInfo& /*info*/) override {
        if (had_model_) editing_mask_ = false;
        had_model_ = true;
    }
    std::optional<session::MapRegion> map_in_sight() const override {
        return region_in_sight(zoom_, map_rows_, map_cols_);
    }

private:
    // Edit mask: the cells the pointer crosses between two frames, each set as the button says.
    void paint_mask(session::AppState& state, const HeatmapGeometry& g, Eigen::Index rows, Eigen::Index cols);

    // A pinned query's weights as bars, its largest keys named, under the map.
    static void draw_pinned_row(const Matrix& weights, int query, const HeatmapLabels& labels,
                                const HeatmapGeometry& g);
    static constexpr float pinned_row_height = 110.0f;   // at 1x (ui_scale.h)
    // The head's scores before the softmax for the hover: the run's own where it kept
    // this layer's stages, else computed for this head once the pointer is on the map.
    const Matrix* hover_scores(ViewContext& context, int layer, int head);

    // The hovered head's scores as the job computed them, and for which result and head.
    struct HoverScores {
        std::string of;
        Matrix scores;
    };
    static constexpr const char* hover_scores_key = "matrix hover scores";
    std::shared_ptr<const HoverScores> scores_;
    std::string last_started_;                          // what the last job was started for
    bool hovering_ = false;                             // the pointer was on the map last frame
    bool editing_mask_ = false;                         // clicks forbid / allow pairs instead of pinning
    bool had_model_ = false;                            // fit_to_model was called before
    MapZoom zoom_;                                      // kept across heads: two heads compare at the same zoom
    std::optional<std::pair<int, int>> last_painted_;   // (query, key) of the last frame's paint
    int map_rows_ = 0;                                  // the size of the map last drawn
    int map_cols_ = 0;
};

// The hovered head's stages are computed alone (its scores, masked scores and map, each
// [T, T], and the layer's rows on the way): at most this much, so that a hover never asks
// for gigabytes at long inputs.
constexpr double hover_stages_bytes = 512.0 * 1024 * 1024;

const Matrix* MatrixView::hover_scores(ViewContext& context, int layer, int head) {
    const session::Snapshot& shown = context.shown();
    if (const Matrix* kept = shown.head_scores(layer, head)) return kept;
    const double T = static_cast<double>(shown.input.labels.size());
    // Its scores, masked scores and map, and the layer's [T, E]-sized rows on the way (the
    // input, its norm, q, k, v and their unrotated copies, the heads' concat, the output).
    const double E = static_cast<double>(shown.info.width);
    const double stages_bytes = (3.0 * T * T + 12.0 * T * E) * sizeof(float);
    if (!hovering_ || !shown.model_ref || stages_bytes > hover_stages_bytes) return nullptr;
    // One key for every head's scores, so the views' jobs keep their results (they keep
    // 16), and never started over another view's job (starting one stops the running one).
    const std::string wanted = std::to_string(shown.generation) + numbered(" ", layer, head) + shown.input_key;
    BackgroundJobs& jobs = context.view_jobs();
    const auto computed = jobs.result<HoverScores>(hover_scores_key);
    if (computed && computed->of == wanted) {
        scores_ = computed;   // held here while the frame draws it
        return &scores_->scores;
    }
    const auto running = jobs.running();
    if (wanted == last_started_ || (running && running->first != hover_scores_key)) return nullptr;
    last_started_ = wanted;
    const std::shared_ptr<const Snapshot> snapshot = context.shown_ptr();
    jobs.restart(
        hover_scores_key, BackgroundJobs::job<HoverScores>([snapshot, layer, head, wanted](const LoadControl&) {
            AttentionTrace stages =
                snapshot->model_ref->layer_stages(snapshot->trace, layer, snapshot->options.disabled_heads, head);
            // Only the head's scores are kept.
            return std::make_shared<const HoverScores>(
                HoverScores{wanted, std::move(stages.heads[static_cast<std::size_t>(head)].scores)});
        }));
    return nullptr;
}

void MatrixView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const int layer = state.layer;
    const int head = state.head;
    const std::shared_ptr<const Matrix> map = shown.head_map(layer, head);
    const Matrix& weights = *map;
    ImGui::Text("%s %d.%d%s", kind_heading(state.kind), layer, head,
                kind_disabled_heads(state).off(layer, head) ? "  (disabled: zero context)" : "");
    if (const HeadCaption caption = context.head_caption(layer, head); !caption.text.empty()) {
        ImGui::TextWrapped("%s", caption.text.c_str());
    }
    colour_legend(state.colormap, "0", state.scale == HeatScale::per_head ? "head max" : "1", true,
                  !std::isfinite(weights.sum()));
    // A local layer's sliding window, apart from the causal triangle.
    const Eigen::Index window = shown.trace.layers[static_cast<std::size_t>(layer)].window;
    if (window > 0) window_legend(window);
    // The custom mask is over the decoder's own positions (an encoder-decoder's other
    // kinds are drawn without it).
    if (state.kind == AttentionKind::decoder) {
        ImGui::Checkbox("Edit mask", &editing_mask_);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click or drag over cells to forbid / allow query -> key pairs");
        ImGui::SameLine();
        if (ImGui::Button("Clear mask")) clear_mask(state);
        ImGui::SameLine();
        if (ImGui::Button("Invert mask")) invert_mask(state, static_cast<int>(shown.input.labels.size()));
    } else {
        editing_mask_ = false;
    }
    if (zoom_.zoom > 1.0f) {
        ImGui::SameLine();
        if (ImGui::SmallButton("Fit (F)")) zoom_ = MapZoom{};
        ImGui::SameLine();
        ImGui::TextDisabled("zoom %.1fx", static_cast<double>(zoom_.zoom));
    }
    // Last on the line, and under it where the window is too narrow: never cut off.
    const char* axes = state.kind == AttentionKind::cross     ? "rows: target tokens, columns: source tokens"
                       : state.kind == AttentionKind::encoder ? "the encoder: rows, columns: source tokens"
                                                              : "rows: queries, columns: keys";
    const std::string hint = editing_mask_
                                 ? std::string("drag over cells to forbid (right button: allow)")
                                 : std::string(axes) + (zoom_.zoom > 1.0f ? "; click a row to pin it"
                                                                          : "; click a row to pin it (wheel: zoom)");
    hint_beside(hint.c_str());
    const ImVec2 available = ImGui::GetContentRegionAvail();
    // A pinned row's bars go under the map: room is kept for them.
    const bool pinned = !editing_mask_ && state.query >= 0 && state.query < weights.rows();
    // The width and height left (a square map takes the smaller; a wide one, cross-attention's, more width).
    const ImVec2 room(available.x, available.y - (pinned ? px(pinned_row_height) : 0.0f));
    const HeatmapLabels labels{shown.input.labels, shown.column_labels()};
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const int clicked = draw_heatmap("matrix", weights, hover_scores(context, layer, head), context.mask(),
                                     context.weights_texture(numbered("w", layer, head), weights), labels, room, zoom_,
                                     editing_mask_ ? MapDrag::paints : MapDrag::pans, editing_mask_ ? -1 : state.query);
    const HeatmapGeometry g = heatmap_geometry(weights, labels, room, before, zoom_);
    hovering_ = ImGui::IsWindowHovered() && g.contains(ImGui::GetIO().MousePos);
    map_rows_ = static_cast<int>(weights.rows());
    map_cols_ = static_cast<int>(weights.cols());
    if (window > 0) {
        ImDrawList* draw = ImGui::GetWindowDrawList();
        draw->PushClipRect(g.min, g.max(), true);
        draw_window_band(g.at(0.0f, 0.0f), g.cell, weights.rows(), weights.cols(), window);
        draw->PopClipRect();
    }
    if (pinned) draw_pinned_row(weights, state.query, labels, g);
    if (editing_mask_) {
        paint_mask(state, g, weights.rows(), weights.cols());
    } else if (clicked >= 0) {
        state.query = clicked == state.query ? -1 : clicked;
    }
}

void MatrixView::draw_pinned_row(const Matrix& weights, int query, const HeatmapLabels& labels,
                                 const HeatmapGeometry& g) {
    // Its five largest weights named, and the row as bars under the keys in sight, each
    // under its column.
    const auto n = static_cast<int>(weights.cols());
    std::vector<float> row(weights.row(query).data(), weights.row(query).data() + n);
    std::vector<int> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    const int top = std::min(n, 5);
    std::partial_sort(order.begin(), order.begin() + top, order.end(), [&row](int a, int b) {
        return row[static_cast<std::size_t>(a)] > row[static_cast<std::size_t>(b)];
    });
    const auto label_in = [](const std::vector<std::string>& names, int i) {
        return i < static_cast<int>(names.size()) ? visible_token(names[static_cast<std::size_t>(i)]) : std::string();
    };
    const auto label = [&](int key) { return label_in(labels.keys, key); };
    if (ImGui::SmallButton("Copy row")) {
        std::string text("key\tkey token\tweight\n");
        char weight[32];
        for (int j = 0; j < n; ++j) {
            std::snprintf(weight, sizeof weight, "\t%.9g\n", static_cast<double>(row[static_cast<std::size_t>(j)]));
            text.append(std::to_string(j)).append("\t").append(label(j)).append(weight);
        }
        copy_to_clipboard(text);
    }
    ImGui::SameLine();
    ImGui::Text("Query %d %s attends most to:", query, label_in(labels.queries, query).c_str());
    for (int r = 0; r < top; ++r) {
        const int key = order[static_cast<std::size_t>(r)];
        ImGui::SameLine();
        ImGui::Text(" %s (%d) %.3f", label(key).c_str(), key, static_cast<double>(row[static_cast<std::size_t>(key)]));
    }
    const float high = std::max(*std::max_element(row.begin(), row.end()), 1e-12f);
    const int first = std::clamp(static_cast<int>(g.first_col), 0, n - 1);
    const int last = std::clamp(static_cast<int>(std::ceil(g.first_col + g.size.x / g.cell)), first + 1, n);
    ImGui::SetCursorScreenPos(ImVec2(g.min.x, ImGui::GetCursorScreenPos().y));
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(0.0f, 0.0f));
    ImGui::PlotHistogram(
        "##pinned row", row.data() + first, last - first, 0, nullptr, 0.0f, high,
        ImVec2(g.cell * static_cast<float>(last - first), px(pinned_row_height) - 2.0f * ImGui::GetFrameHeight()));
    ImGui::PopStyleVar();
}

void MatrixView::paint_mask(session::AppState& state, const HeatmapGeometry& g, Eigen::Index rows, Eigen::Index cols) {
    // The cell under the mouse while a button is held: left forbids, right allows.
    const ImGuiIO& io = ImGui::GetIO();
    const bool forbid = ImGui::IsMouseDown(ImGuiMouseButton_Left);
    const bool allow = ImGui::IsMouseDown(ImGuiMouseButton_Right);
    // The map's own button is the active item while a mouse button is held on it:
    // hovering counts through it, or no drag would.
    const bool inside =
        g.contains(io.MousePos) && ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
    if (!inside || (!forbid && !allow)) {
        last_painted_.reset();
        return;
    }
    const int i = g.row_under(io.MousePos.y, static_cast<int>(rows));
    const int j = g.col_under(io.MousePos.x, static_cast<int>(cols));
    // A quick drag crosses several cells between two frames: every one on the way is set.
    const auto [i0, j0] = last_painted_.value_or(std::pair<int, int>{i, j});
    const int steps = std::max(std::abs(i - i0), std::abs(j - j0));
    for (int s = 0; s <= steps; ++s) {
        const float t = steps == 0 ? 1.0f : static_cast<float>(s) / static_cast<float>(steps);
        const int qi = static_cast<int>(std::lround(static_cast<float>(i0) + t * static_cast<float>(i - i0)));
        const int kj = static_cast<int>(std::lround(static_cast<float>(j0) + t * static_cast<float>(j - j0)));
        set_forbidden(state, qi, kj, forbid);
    }
    last_painted_ = std::pair<int, int>{i, j};
}

std::unique_ptr<View> make_matrix_view() { return std::make_unique<MatrixView>(); }

}   // namespace headscope::ui
