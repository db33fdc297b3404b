// The Stages view: one head step by step: Q, K, V, scores, mask, softmax, context.

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
#include <memory>
#include <string>
#include <vector>

namespace headscope::ui {

using namespace session;

class StagesView final : public View {
public:
    std::string_view name() const override { return "stages"; }
    const char* title() const override { return "Stages"; }
    std::string_view summary() const override {
        return "one head step by step: Q, K, V, scores, mask, softmax, context";
    }
    session::ViewNeeds needs(const session::AppState& /*state*/) const override { return {.stages_of_layer = true}; }
    void draw(ViewContext& context) override;
};

namespace {

struct Stage {
    std::string name;
    const Matrix* values;
    bool weights;
    bool by_keys = false;    // [Tq, Tk]: a query's row against every key (scores, masked, softmax)
    bool key_rows = false;   // a row per key (K, V): the source's tokens in cross-attention
};

// The scores' step as the model computes it: the scale it actually uses (Gemma 2 and 3:
// query_pre_attn_scalar^-1/2, not the head width's; T5: none), its soft cap, and T5's bias
// by relative position (its self-attention's; the cross-attention has none).
std::string scores_stage_name(const ModelInfo& info, AttentionKind kind) {
    const auto setting = [&](const char* key) {
        const auto it = info.settings.find(key);
        return it != info.settings.end() ? it->second : std::string();
    };
    std::string name = "Q K^T / sqrt(Dh = " + std::to_string(info.head_width) + ")";
    if (setting("score_scale") == "1") name = "Q K^T (unscaled)";
    if (!setting("relative_attention_num_buckets").empty() && kind != AttentionKind::cross) name += " + position bias";
    if (const std::string scalar = setting("query_pre_attn_scalar"); !scalar.empty()) {
        name = "Q K^T / sqrt(query_pre_attn_scalar = " + scalar.substr(0, scalar.find(' ')) + ")";
    }
    if (const std::string cap = setting("score_cap"); !cap.empty())
        name += ", capped: " + cap + " tanh(s / " + cap + ")";
    return name;
}

// The tooltip over a stage's map drawn at `origin`, `extent` px: the cell under the
// pointer outlined, its row's token, its column (a key's token where the stage is
// [T, T], else a feature), its value.
void hover_stage(const Stage& stage, const HeatmapLabels& tokens, ImVec2 origin, ImVec2 extent) {
    const Matrix& m = *stage.values;
    const auto rows = static_cast<int>(m.rows());
    const auto cols = static_cast<int>(m.cols());
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (mouse.x >= origin.x + extent.x || mouse.y >= origin.y + extent.y) return;
    const float cw = extent.x / static_cast<float>(cols);
    const float ch = extent.y / static_cast<float>(rows);
    const int i = cell_under(mouse.y, origin.y, ch, rows);
    const int j = cell_under(mouse.x, origin.x, cw, cols);
    const ImVec2 at(origin.x + cw * static_cast<float>(j), origin.y + ch * static_cast<float>(i));
    ImGui::GetWindowDrawList()->AddRect(at, ImVec2(at.x + std::max(cw, 1.0f), at.y + std::max(ch, 1.0f)),
                                        IM_COL32(255, 255, 255, 255));
    const auto token_in = [](const std::vector<std::string>& names, int k) {
        return k < static_cast<int>(names.size()) ? visible_token(names[static_cast<std::size_t>(k)]) : std::string();
    };
    const auto row_token = [&](int k) { return token_in(stage.key_rows ? tokens.keys : tokens.queries, k); };
    const auto key_token = [&](int k) { return token_in(tokens.keys, k); };
    const bool by_keys = stage.by_keys;
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(stage.name.c_str());
    ImGui::Text("row %d  %s", i, row_token(i).c_str());
    if (by_keys) {
        ImGui::Text("key %d  %s", j, key_token(j).c_str());
    } else {
        ImGui::Text("feature %d", j);
    }
    const float value = m(i, j);
    if (std::isinf(value) && value < 0.0f) {
        ImGui::TextUnformatted("-inf (masked: weight 0)");
    } else {
        ImGui::Text("value %.5g", static_cast<double>(value));
    }
    ImGui::TextDisabled("Ctrl+C: copy");
    ImGui::EndTooltip();
    if (!copy_key_pressed()) return;
    // A header and one row, tab-separated, as the Matrix view copies a cell.
    char number[32];
    std::snprintf(number, sizeof number, "\t%.9g\n", static_cast<double>(value));
    std::string text("stage\trow\trow token\t");
    text.append(by_keys ? "key\tkey token" : "feature").append("\tvalue\n").append(stage.name);
    text.append("\t").append(std::to_string(i)).append("\t").append(row_token(i));
    text.append("\t").append(std::to_string(j));
    if (by_keys) text.append("\t").append(key_token(j));
    copy_to_clipboard(text.append(number));
}

// A layer's steps for one head, in the order the layer takes them (the RoPE copies empty
// where the model rotates nothing: not drawn). Cross-attention's queries are the decoder's,
// its keys and values the encoder's output's.
std::vector<Stage> stages_of(const AttentionTrace& layer, const HeadTrace& head, const ModelInfo& info,
                             AttentionKind kind) {
    const bool rotated = head.q_unrotated.size() != 0;
    const bool cross = kind == AttentionKind::cross;
    return {
        {cross ? "X = norm(x), the decoder's stream" : "X = norm(x), the layer's input", &layer.input, false},
        {"Q before RoPE", &head.q_unrotated, false},
        {"K before RoPE", &head.k_unrotated, false, false, true},
        {rotated ? "Q after RoPE" : "Q = X Wq^T + bq", &head.q, false},
        {rotated ? "K after RoPE" : (cross ? "K, of the encoder's output" : "K"), &head.k, false, false, true},
        {cross ? "V, of the encoder's output" : "V", &head.v, false, false, true},
        {scores_stage_name(info, kind), &head.scores, false, true},
        {layer.window > 0 ? "+ mask, window " + std::to_string(layer.window) : "+ mask", &head.masked, false, true},
        {"softmax", &head.weights, true, true},
        {"x V (context)", &head.context, false},
        {"heads concatenated", &layer.concat, false},
        {"output projection", &layer.output, false},
    };
}

}   // namespace

void StagesView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const AttentionTrace& layer = shown.trace.layers[static_cast<std::size_t>(state.layer)];
    const HeadTrace& head = layer.heads[static_cast<std::size_t>(state.head)];
    ImGui::Text("%s %d.%d, step by step", kind_heading(state.kind), state.layer, state.head);
    if (detail_of(layer) != TraceDetail::all_stages) {
        // A run keeps the stages of the layer this view shows only (a third of the
        // memory otherwise); the request for this layer's is on its way.
        ImGui::TextDisabled("Computing layer %d's stages...", state.layer);
        return;
    }
    colour_legend(Colormap::coolwarm, "-max |value|", "+max |value|", false);
    same_line_if_fits(colour_legend_width("softmax 0", "1"));
    colour_legend(state.colormap, "softmax 0", "1");
    if (layer.window > 0) window_legend(layer.window);
    const auto shape = [](const Matrix& m) {
        char text[48];
        std::snprintf(text, sizeof text, "[%ld, %ld]", static_cast<long>(m.rows()), static_cast<long>(m.cols()));
        return std::string(text);
    };
    const std::vector<Stage> stages = stages_of(layer, head, shown.info, state.kind);
    if (shown.info.n_kv_heads > 0 && shown.info.n_kv_heads < shown.info.n_heads) {
        const Eigen::Index group = shown.info.n_heads / shown.info.n_kv_heads;
        ImGui::TextDisabled("K and V are key/value head %d's, shared by query heads %d-%d", state.head / int(group),
                            int(state.head / group * group), int(state.head / group * group + group - 1));
    }
    // Four to a row while they are at least 150 px (at 1x): they grow with the window.
    const float side = std::clamp(ImGui::GetContentRegionAvail().x / 4.0f - px(16.0f), px(150.0f), px(360.0f));
    int column = 0;
    const int per_row = std::max(1, static_cast<int>(ImGui::GetContentRegionAvail().x / (side + px(16.0f))));
    for (const Stage& s : stages) {
        if (s.values->size() == 0) continue;
        if (column++ % per_row) ImGui::SameLine();
        ImGui::BeginGroup();
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + side);   // a long step wraps, not under its neighbour
        ImGui::TextUnformatted(s.name.c_str());
        ImGui::PopTextWrapPos();
        ImGui::TextDisabled("%s", shape(*s.values).c_str());
        const std::string key = numbered("stage", state.layer, state.head) + s.name;
        const HeatmapTexture& t =
            s.weights ? context.weights_texture(key, *s.values)
                      : context.signed_texture(key, *s.values, s.values == &head.masked ? context.mask() : nullptr);
        const float aspect =
            static_cast<float>(s.values->cols()) / static_cast<float>(std::max<Eigen::Index>(1, s.values->rows()));
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        // No thinner than a third of the square: a short input's [21, 768] is a readable
        // band (rows stretched), not a strip of 4 pixels.
        const ImVec2 extent = aspect >= 1.0f ? ImVec2(side, std::max(side / aspect, side / 3.0f))
                                             : ImVec2(std::max(side * aspect, side / 3.0f), side);
        ImGui::GetWindowDrawList()->AddImage(t.id(), origin, ImVec2(origin.x + extent.x, origin.y + extent.y));
        if (layer.window > 0 && (s.values == &head.masked || s.values == &head.weights)) {
            // The window's band in its own colour (its scores are -inf, its weights 0), as the Matrix view draws it.
            draw_window_band(origin, extent.x / static_cast<float>(s.values->cols()), s.values->rows(),
                             s.values->cols(), layer.window);
        }
        ImGui::PushID(key.c_str());
        ImGui::InvisibleButton("cells", ImVec2(side, side));
        if (ImGui::IsItemHovered()) hover_stage(s, {shown.input.labels, shown.column_labels()}, origin, extent);
        ImGui::PopID();
        ImGui::EndGroup();
    }
}

std::unique_ptr<View> make_stages_view() { return std::make_unique<StagesView>(); }

}   // namespace headscope::ui
