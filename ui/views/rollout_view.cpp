// The Rollout view: attention rollout through the layers.

#include "core/analysis/rollout.h"
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
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace headscope::ui {

using namespace session;

class RolloutView final : public View {
public:
    std::string_view name() const override { return "rollout"; }
    const char* title() const override { return "Rollout"; }
    std::string_view summary() const override { return "attention rollout through the layers"; }
    void draw(ViewContext& context) override;
    std::string settings() const override;
    std::string restore(const std::string& settings) override;
    void fit_to_model(const ModelInfo& info) override;
    void fit_to_length(int n_tokens) override {
        if (own_.row >= n_tokens) own_.row = -1;
    }

private:
    struct Settings {
        RolloutOptions options;   // fusion, discard ratio, layers (disabled heads: the run's)
        int row = -1;             // the rollout row shown (-1: [CLS] / the last token / the mean)
    };
    Settings own_;
    // The rollout on screen: kept while a slider's newer rollout computes (same result only).
    std::shared_ptr<const Matrix> rollout_shown_;
    std::string rollout_shown_of_;   // the result (ViewContext::result_key) rollout_shown_ is of
    std::string rollout_key(ViewContext& context) const;
    // `row`: the row drawn (own_.row where this rollout has it, else -1: the default).
    void draw_patch_rollout(ViewContext& context, const Matrix& R, const std::string& key, int chosen);
    void draw_token_rollout(ViewContext& context, const Matrix& R, int row);
};

namespace {

// The layers multiplied through inside a model of L layers (the end -1: the last).
void fit_layers(RolloutOptions& o, int L) {
    const int last = std::max(0, L - 1);
    o.start_layer = std::clamp(o.start_layer, 0, last);
    if (o.end_layer > last) o.end_layer = -1;
    if (o.end_layer >= 0 && o.end_layer < o.start_layer) o.end_layer = o.start_layer;
}

// Head fusion, discard ratio and the layers multiplied through; L: the model's layers.
void draw_rollout_options(RolloutOptions& o, int L) {
    int fusion = static_cast<int>(o.fusion);
    ImGui::SetNextItemWidth(px(110.0f));
    if (ImGui::Combo("head fusion", &fusion, "mean\0max\0min\0")) o.fusion = static_cast<HeadFusion>(fusion);
    same_line_if_fits(labelled_width(px(160.0f), "discard ratio"));
    float discard = static_cast<float>(o.discard_ratio);
    ImGui::SetNextItemWidth(px(160.0f));
    if (ImGui::SliderFloat("discard ratio", &discard, 0.0f, 0.99f, "%.2f", ImGuiSliderFlags_AlwaysClamp)) {
        o.discard_ratio = std::clamp(discard, 0.0f, 0.99f);
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Drop this fraction of each layer's lowest fused weights (never [CLS]'s own)");
    same_line_if_fits(labelled_width(px(120.0f), "from layer"));
    int end = o.end_layer < 0 ? L - 1 : o.end_layer;
    ImGui::SetNextItemWidth(px(120.0f));
    ImGui::SliderInt("from layer", &o.start_layer, 0, L - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
    same_line_if_fits(labelled_width(px(120.0f), "to layer"));
    ImGui::SetNextItemWidth(px(120.0f));
    if (ImGui::SliderInt("to layer", &end, 0, L - 1, "%d", ImGuiSliderFlags_AlwaysClamp)) {
        end = std::clamp(end, 0, L - 1);
        o.end_layer = end == L - 1 ? -1 : end;
    }
    fit_layers(o, L);
}

// A bar over each token, `bars` its values (max: the tallest), wrapping at the window's
// edge; click a bar to choose that token's row.
void draw_token_bars(const std::vector<std::string>& labels, const RowVector& bars, float max, Colormap colormap,
                     int& rollout_query) {
    const float bar_h = px(90.0f);
    const float line = ImGui::GetTextLineHeight();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    float x = ImGui::GetCursorScreenPos().x;
    float y = ImGui::GetCursorScreenPos().y;
    const float right = x + ImGui::GetContentRegionAvail().x;
    const float start_x = x;
    for (int i = 0; i < static_cast<int>(bars.size()); ++i) {
        const std::string& label = labels[static_cast<std::size_t>(i)];
        const float w = std::max(ImGui::CalcTextSize(label.c_str()).x + px(10.0f), px(22.0f));
        if (x + w > right && x > start_x) {
            x = start_x;
            y += bar_h + line + px(14.0f);
        }
        const float value = bars(i) / max;
        const float top = y + bar_h * (1.0f - value);
        draw->AddRectFilled(ImVec2(x + px(2.0f), top), ImVec2(x + w - px(2.0f), y + bar_h), colour_of(colormap, value));
        draw->AddRect(ImVec2(x + px(2.0f), y), ImVec2(x + w - px(2.0f), y + bar_h), IM_COL32(80, 80, 80, 255));
        draw->AddText(ImVec2(x + px(5.0f), y + bar_h + px(3.0f)), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
        ImGui::SetCursorScreenPos(ImVec2(x, y));
        ImGui::PushID(i);
        ImGui::InvisibleButton("bar", ImVec2(w, bar_h + line + px(4.0f)));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: %.4f", label.c_str(), bars(i));
        if (ImGui::IsItemClicked()) rollout_query = i;
        ImGui::PopID();
        x += w;
    }
    ImGui::SetCursorScreenPos(ImVec2(start_x, y + bar_h + line + px(14.0f)));
    ImGui::Dummy(ImVec2(1.0f, 1.0f));
}

}   // namespace

std::string RolloutView::settings() const {
    SettingsWriter out;
    out.set("fusion", std::string(head_fusion_name(own_.options.fusion)))
        .set("discard_ratio", own_.options.discard_ratio)
        .set("start_layer", own_.options.start_layer)
        .set("end_layer", own_.options.end_layer)
        .set("row", own_.row);
    return out.text();
}

std::string RolloutView::restore(const std::string& settings) {
    return read_settings(settings, own_, [](SettingsReader& in, Settings& into) {
        in.read("fusion", into.options.fusion,
                {{"mean", HeadFusion::mean}, {"max", HeadFusion::max}, {"min", HeadFusion::min}});
        // The slider's top, 0.99 as a float, is a hair above 0.99 as a double.
        in.read("discard_ratio", into.options.discard_ratio, 0.0, static_cast<double>(0.99f));
        // The model's own range applies once it is in (fit_to_model, fit_to_length).
        in.read("start_layer", into.options.start_layer, 0, INT_MAX);
        in.read("end_layer", into.options.end_layer, -1, INT_MAX);
        in.read("row", into.row, -1, INT_MAX);
    });
}

void RolloutView::fit_to_model(const ModelInfo& info) { fit_layers(own_.options, static_cast<int>(info.n_layers)); }

void RolloutView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    if (!shown.key_labels.empty()) {
        ImGui::TextWrapped("Rollout multiplies self-attention through the layers; cross-attention's maps are target "
                           "tokens over source tokens. Choose the encoder or the decoder under Attention.");
        return;
    }
    draw_rollout_options(own_.options, static_cast<int>(shown.info.n_layers));

    const std::string key = rollout_key(context);
    const std::shared_ptr<const Snapshot> snapshot = context.shown_ptr();
    RolloutOptions options = own_.options;
    options.disabled_heads = snapshot->options.disabled_heads;
    const BackgroundJobs::Work work = BackgroundJobs::job<Matrix>([snapshot, options](const LoadControl& control) {
        // A streamed run's maps are computed again here, layer by layer, off the UI thread.
        return std::make_shared<const Matrix>(
            attention_rollout(HeadMaps(snapshot->trace, snapshot->model_ref.get()), options, control));
    });
    context.view_jobs().start(key, work);
    draw_job_progress(context.view_jobs(), key, "rollout", work);
    const auto rollout = context.view_jobs().result<Matrix>(key);
    if (rollout) {
        rollout_shown_ = rollout;
        rollout_shown_of_ = context.result_key();
    }
    // While a slider moves, the last rollout of this result stays up.
    const std::shared_ptr<const Matrix> shown_rollout =
        rollout_shown_of_ == context.result_key() ? rollout_shown_ : nullptr;
    if (!shown_rollout) {
        ImGui::TextUnformatted("computing the rollout...");
        return;
    }
    const Matrix& R = *shown_rollout;
    // A row past this rollout's end is drawn as the default, not forgotten: a session
    // restored for a longer input chose it while this shorter result is still up.
    const int row = own_.row < static_cast<int>(R.rows()) ? own_.row : -1;
    if (shown.info.takes_image && shown.input.grid_width > 0) {
        draw_patch_rollout(context, R, key, row);
    } else {
        draw_token_rollout(context, R, row);
    }
}

// [CLS]'s row over the patches (or the chosen patch's), as vit-explain draws it.
void RolloutView::draw_patch_rollout(ViewContext& context, const Matrix& R, const std::string& key, int chosen) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInput& input = shown.input;
    const int L = static_cast<int>(shown.info.n_layers);
    const RolloutOptions& o = own_.options;
    const int row = chosen >= 0 ? chosen : 0;
    const int prefix = input.n_prefix_tokens;
    const int gw = input.grid_width;
    const int gh = input.grid_height;
    Matrix map(gh, gw);
    for (int n = 0; n < gw * gh; ++n) map(n / gw, n % gw) = R(row, prefix + n);
    const float max = std::max(map.maxCoeff(), 1e-12f);
    ImGui::Text(prefix > 0 ? "What %s draws on, through layers %d..%d (click a patch to follow it; [CLS] button to "
                             "go back)"
                           : "What %s draws on, through layers %d..%d (click a patch to follow it)",
                input.labels[static_cast<std::size_t>(row)].c_str(), o.start_layer,
                o.end_layer < 0 ? L - 1 : o.end_layer);
    colour_legend(state.colormap, "0", "the map's max", false);
    const HeatmapTexture& heat = context.textures().get(
        key + " map " + std::to_string(row), [&] { return heatmap_mip_levels(map, nullptr, state.colormap, max); });
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const auto [origin, width, height] =
        context.draw_picture_with_heat(heat, gw, gh, ImVec2(avail.x - px(140.0f), avail.y - px(10.0f)));
    if (ImGui::InvisibleButton("rollout patches", ImVec2(width, height))) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int gx = cell_under(m.x, origin.x, width / static_cast<float>(gw), gw);
        const int gy = cell_under(m.y, origin.y, height / static_cast<float>(gh), gh);
        own_.row = prefix + gy * gw + gx;
    }
    if (prefix > 0) {   // SigLIP has no [CLS]
        ImGui::SameLine();
        if (ImGui::Button("[CLS]")) own_.row = -1;
    }
}

// Text: a bar over each token, for the row chosen.
void RolloutView::draw_token_rollout(ViewContext& context, const Matrix& R, int row) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInput& input = shown.input;
    const int L = static_cast<int>(shown.info.n_layers);
    const RolloutOptions& o = own_.options;
    const int T = static_cast<int>(R.rows());
    const bool causal = shown.causal;
    const char* default_row = causal ? "the last token" : "every position (mean)";
    std::string current = row < 0 ? default_row : input.labels[static_cast<std::size_t>(row)];
    ImGui::SetNextItemWidth(px(240.0f));
    if (ImGui::BeginCombo("what draws on the tokens", current.c_str())) {
        if (ImGui::Selectable(default_row, row < 0)) own_.row = -1;
        for (int i = 0; i < T; ++i) {
            const std::string label = std::to_string(i) + ": " + input.labels[static_cast<std::size_t>(i)];
            if (ImGui::Selectable(label.c_str(), row == i)) own_.row = i;
        }
        ImGui::EndCombo();
    }
    RowVector bars;
    if (row >= 0) {
        bars = R.row(row);
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
    draw_token_bars(input.labels, bars, max, state.colormap, row);
}

std::string RolloutView::rollout_key(ViewContext& context) const {
    const RolloutOptions& o = own_.options;
    char text[96];
    std::snprintf(text, sizeof text, " %d %.4f %d %d", static_cast<int>(o.fusion), o.discard_ratio, o.start_layer,
                  o.end_layer);
    return "rollout " + context.result_key() + text;
}

std::unique_ptr<View> make_rollout_view() { return std::make_unique<RolloutView>(); }

}   // namespace headscope::ui
