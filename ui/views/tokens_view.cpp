// The Tokens view: lines from each query to the keys it attends, one colour per head.

#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/cell_under.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace headscope::ui {

using namespace session;

class TokensView final : public View {
public:
    std::string_view name() const override { return "tokens"; }
    const char* title() const override { return "Tokens"; }
    std::string_view summary() const override {
        return "lines from each query to the keys it attends, one colour per head";
    }
    void draw(ViewContext& context) override;

private:
    // A long input shows a window of rows, both columns alike: its first token (kept
    // while the input changes length, moved by the wheel, the slider or a pinned query).
    int first_ = 0;
    int pinned_seen_ = -1;   // the pinned query the window last went to
};

namespace {

// One colour per head (matplotlib's tab10, colour-blind friendlier than a rainbow).
constexpr ImU32 head_colours[] = {
    IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),  IM_COL32(44, 160, 44, 255),
    IM_COL32(214, 39, 40, 255),   IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
    IM_COL32(227, 119, 194, 255), IM_COL32(188, 189, 34, 255),
};

// What the lines are, and each shown head's colour.
void draw_heading(const session::AppState& state, int n_heads, bool cross) {
    ImGui::TextWrapped(cross
                           ? "Layer %d: lines from each target token (left) to the source tokens it attends (right); "
                             "opacity = weight"
                           : "Layer %d: lines from each query (left) to the keys it attends (right); opacity = weight",
                       state.layer);
    for (int h = 0; h < n_heads; ++h) {
        if (state.hidden_heads.off(state.layer, h)) continue;
        const std::string name = numbered("head ", h);
        same_line_if_fits(ImGui::CalcTextSize(name.c_str()).x);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(head_colours[h % 8]), "%s", name.c_str());
    }
}

// The rows whose lines are drawn: queries [first, end) (only `focus` when >= 0) to keys [0, n_keys).
struct LineRows {
    int first = 0;
    int end = 0;
    int n_keys = 0;
    int focus = -1;
};

// Each shown head's lines of the layer, from x.x (the queries' column) to x.y (the keys'),
// at the heights y_of gives a position; opacity = weight.
void draw_head_lines(const Snapshot& shown, const AppState& state, const LineRows& rows, ImVec2 x,
                     const std::function<float(int)>& y_of) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (int h = 0; h < static_cast<int>(shown.info.n_heads); ++h) {
        if (state.hidden_heads.off(state.layer, h)) continue;
        const std::shared_ptr<const Matrix> map_of_head = shown.head_map(state.layer, h);
        const Matrix& w = *map_of_head;
        const ImU32 base = head_colours[h % 8] & 0x00FFFFFFu;
        for (int i = rows.first; i < rows.end; ++i) {
            if (rows.focus >= 0 && i != rows.focus) continue;
            for (int j = 0; j < rows.n_keys; ++j) {
                const float weight = w(i, j);
                if (weight < 0.02f) continue;   // invisible anyway; keeps long inputs cheap
                const auto alpha = static_cast<ImU32>(std::clamp(weight, 0.0f, 1.0f) * 255.0f);
                draw->AddLine(ImVec2(x.x, y_of(i)), ImVec2(x.y, y_of(j)), base | (alpha << IM_COL32_A_SHIFT), px(1.5f));
            }
        }
    }
}

}   // namespace

void TokensView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    // Queries on the left, keys on the right: one sequence for self-attention, the target
    // over the source for cross-attention (a window of rows moves both alike).
    const auto& labels = shown.input.labels;
    const auto& key_labels = shown.column_labels();
    const auto n_queries = static_cast<int>(labels.size());
    const auto n_keys = static_cast<int>(key_labels.size());
    const int T = std::max(n_queries, n_keys);
    const auto n_heads = static_cast<int>(shown.info.n_heads);
    draw_heading(state, n_heads, !shown.key_labels.empty());
    const float line = ImGui::GetTextLineHeightWithSpacing();
    // As many rows as fit; a longer input is shown a window at a time (a thousand rows
    // would be a page 19,000 px tall, its lines a tangle).
    const int fit = std::max(8, static_cast<int>((ImGui::GetContentRegionAvail().y - 2.0f * line) / line));
    const bool windowed = T > fit;
    const int rows = windowed ? fit : T;
    if (windowed) {
        if (state.query >= 0 && state.query < n_queries && state.query != pinned_seen_) first_ = state.query - rows / 2;
        pinned_seen_ = state.query;
        first_ = std::clamp(first_, 0, T - rows);
        ImGui::SetNextItemWidth(std::min(px(420.0f), ImGui::GetContentRegionAvail().x * 0.5f));
        int shown_first = first_;
        if (ImGui::SliderInt("##first token", &shown_first, 0, T - rows, "")) first_ = shown_first;
        char range[128];
        std::snprintf(range, sizeof range, "tokens %d..%d of %d (wheel, slider; keys out of sight: at the edge)",
                      first_, first_ + rows - 1, T);
        hint_beside(range);
    } else {
        first_ = 0;
    }
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float column = px(180.0f);
    const float gap = std::max(px(120.0f), ImGui::GetContentRegionAvail().x - 2 * column - px(20.0f));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    int hovered = -1;
    for (int r = 0; r < rows; ++r) {
        const int i = first_ + r;
        const ImVec2 left(origin.x, origin.y + static_cast<float>(r) * line);
        const ImVec2 right(origin.x + column + gap, left.y);
        if (i < n_queries) {
            const std::string label = visible_token(labels[static_cast<std::size_t>(i)]);
            ImGui::SetCursorScreenPos(left);
            ImGui::PushID(i);
            ImGui::Selectable(label.c_str(), state.query == i, 0, ImVec2(column - px(10.0f), 0));
            ImGui::PopID();
            if (ImGui::IsItemHovered()) hovered = i;
            if (ImGui::IsItemClicked()) state.query = state.query == i ? -1 : i;
        }
        if (i < n_keys) {
            const std::string key = visible_token(key_labels[static_cast<std::size_t>(i)]);
            draw->AddText(right, ImGui::GetColorU32(ImGuiCol_Text), key.c_str());
        }
    }
    const ImVec2 end(origin.x + 2 * column + gap, origin.y + static_cast<float>(rows) * line);
    if (windowed && ImGui::IsMouseHoveringRect(origin, end) && ImGui::GetIO().MouseWheel != 0.0f) {
        first_ = std::clamp(first_ - static_cast<int>(3.0f * ImGui::GetIO().MouseWheel), 0, T - rows);
    }
    // Hovering (or pinning) a query shows only its lines.
    const int focus = hovered >= 0 ? hovered : state.query;
    const auto y_of = [&](int position) {   // a row's middle; out of sight: the window's edge
        const float r = std::clamp(static_cast<float>(position - first_) + 0.5f, 0.0f, static_cast<float>(rows));
        return origin.y + r * line;
    };
    draw_head_lines(shown, state, LineRows{first_, std::min(first_ + rows, n_queries), n_keys, focus},
                    ImVec2(origin.x + column - px(6.0f), origin.x + column + gap - px(6.0f)), y_of);
    ImGui::SetCursorScreenPos(ImVec2(origin.x, end.y));
    ImGui::Dummy(ImVec2(1, 1));
}

std::unique_ptr<View> make_tokens_view() { return std::make_unique<TokensView>(); }

}   // namespace headscope::ui
