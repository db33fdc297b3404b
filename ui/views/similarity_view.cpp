// The Similarity view: how alike the heads' maps are: divergence matrix and a 2-D map.

#include "core/analysis/head_similarity.h"
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
#include <string>

namespace headscope::ui {

using namespace session;

class SimilarityView final : public View {
public:
    std::string_view name() const override { return "similarity"; }
    const char* title() const override { return "Similarity"; }
    std::string_view summary() const override {
        return "how alike the heads' maps are: divergence matrix and a 2-D map";
    }
    void draw(ViewContext& context) override;
    std::string settings() const override {
        SettingsWriter out;
        write_zoom(out, zoom_);
        return out.text();
    }
    std::string restore(const std::string& settings) override { return read_settings(settings, zoom_, read_zoom); }

private:
    std::string similarity_key(ViewContext& context) const;
    void draw_divergence_matrix(ViewContext& context, const HeadSimilarity& s, const std::string& key, float side);
    void draw_head_map(ViewContext& context, const HeadSimilarity& s, float side);

    MapZoom zoom_;   // of the divergence matrix
};

void SimilarityView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    const std::string key = similarity_key(context);
    const std::shared_ptr<const Snapshot> snapshot = context.shown_ptr();
    const BackgroundJobs::Work work = BackgroundJobs::job<HeadSimilarity>([snapshot](const LoadControl& control) {
        return std::make_shared<const HeadSimilarity>(
            head_similarity(HeadMaps(snapshot->trace, snapshot->model_ref.get()), {}, control));
    });
    context.view_jobs().start(key, work);
    ImGui::TextWrapped("How alike the heads attend on this input: Jensen-Shannon divergence between every pair of "
                       "heads (bits, mean over queries)");
    draw_job_progress(context.view_jobs(), key, "comparing heads", work);
    const auto similarity = context.view_jobs().result<HeadSimilarity>(key);
    if (!similarity) return;
    const HeadSimilarity& s = *similarity;
    for (const auto& [l, h] : s.heads) {
        if (l >= shown.info.n_layers || h >= shown.info.n_heads) return;   // never another model's heads
    }
    const int N = static_cast<int>(s.heads.size());
    if (N == 0) return;

    const float side =
        std::clamp(std::min(ImGui::GetContentRegionAvail().x * 0.48f,
                            ImGui::GetContentRegionAvail().y - 4.0f * ImGui::GetTextLineHeightWithSpacing()),
                   px(160.0f), px(1280.0f));
    draw_divergence_matrix(context, s, key, side);
    ImGui::SameLine();
    draw_head_map(context, s, side);
}

// The matrix, rows and columns in the clustering's leaf order: blocks of heads that
// attend alike sit together.
void SimilarityView::draw_divergence_matrix(ViewContext& context, const HeadSimilarity& s, const std::string& key,
                                            float side) {
    session::AppState& state = context.state();
    const int N = static_cast<int>(s.heads.size());
    const float max = std::max(s.divergence.maxCoeff(), 1e-12f);
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + side);   // the group's words wrap at its edge
    ImGui::TextWrapped("divergence, heads in clustering order");
    const HeatmapTexture& t = context.textures().get(key + " matrix", [&] {
        Matrix ordered(N, N);
        for (int i = 0; i < N; ++i) {
            for (int j = 0; j < N; ++j)
                ordered(i, j) =
                    s.divergence(s.order[static_cast<std::size_t>(i)], s.order[static_cast<std::size_t>(j)]);
        }
        return heatmap_mip_levels(ordered, nullptr, state.colormap, max);
    });
    // Head names on both axes in the same order; the selected head's row outlined.
    std::vector<std::string> names;
    int selected = -1;
    for (int i = 0; i < N; ++i) {
        const auto head = s.heads[static_cast<std::size_t>(s.order[static_cast<std::size_t>(i)])];
        names.push_back(std::to_string(head.first) + "." + std::to_string(head.second));
        if (head.first == state.layer && head.second == state.head) selected = i;
    }
    const auto head_at = [&s](int i) {
        return s.heads[static_cast<std::size_t>(s.order[static_cast<std::size_t>(i)])];
    };
    const HoverLines hover = [&](int i, int j) {
        ImGui::Text("%s vs %s: %.4f bits", names[static_cast<std::size_t>(i)].c_str(),
                    names[static_cast<std::size_t>(j)].c_str(),
                    static_cast<double>(
                        s.divergence(s.order[static_cast<std::size_t>(i)], s.order[static_cast<std::size_t>(j)])));
        ImGui::TextDisabled("click: select head %s; wheel: zoom", names[static_cast<std::size_t>(i)].c_str());
    };
    const Matrix shape = Matrix::Zero(N, N);   // the map's size; its values come through `hover`
    const int clicked = draw_heatmap("divergence", shape, nullptr, nullptr, t, HeatmapLabels{names, names},
                                     ImVec2(side, side), zoom_, MapDrag::pans, selected, hover);
    if (clicked >= 0) {
        state.layer = head_at(clicked).first;
        state.head = head_at(clicked).second;
    }
    char high[32];
    std::snprintf(high, sizeof high, "%.3f bits", max);
    ImGui::PopTextWrapPos();   // a legend's words never break inside a number
    colour_legend(state.colormap, "0 (alike)", high, false);
    ImGui::EndGroup();
}

// The map of heads: classical MDS of the divergences (Clark et al. 2019), dots
// coloured by layer; close dots attend alike.
void SimilarityView::draw_head_map(ViewContext& context, const HeadSimilarity& s, float side) {
    session::AppState& state = context.state();
    const int N = static_cast<int>(s.heads.size());
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + side);
    ImGui::TextWrapped("map of heads (MDS), coloured by layer; click a dot");
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
    const float pad = px(14.0f);
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
    float nearest_d = px(10.0f) * px(10.0f);
    const int L = static_cast<int>(context.shown().info.n_layers);
    for (int n = 0; n < N; ++n) {
        const auto [l, h] = s.heads[static_cast<std::size_t>(n)];
        const ImVec2 p = point(n);
        const bool selected = l == state.layer && h == state.head;
        draw->AddCircleFilled(p, px(selected ? 6.0f : 4.5f),
                              colour_of(layer_colormap, L > 1 ? static_cast<double>(l) / (L - 1) : 0.5));
        // A light ring: cividis' first layers are navy, near the background.
        draw->AddCircle(p, px(selected ? 6.5f : 5.0f), IM_COL32(200, 200, 200, 200));
        if (selected) draw->AddCircle(p, px(8.0f), selected_ring, 0, px(2.0f));
        if (N <= 64) {
            // Few enough to name each dot (ViT-B's 144 would be a blur of labels: hover names those).
            const std::string name = std::to_string(l) + "." + std::to_string(h);
            draw->AddText(ImVec2(p.x + px(7.0f), p.y - px(7.0f)), IM_COL32(200, 200, 200, 220), name.c_str());
        }
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
            state.layer = l;
            state.head = h;
        }
    }
    ImGui::PopTextWrapPos();
    colour_legend(layer_colormap, "first layer", "last layer", false);
    ImGui::EndGroup();
}

std::string SimilarityView::similarity_key(ViewContext& context) const { return "similarity " + context.result_key(); }

std::unique_ptr<View> make_similarity_view() { return std::make_unique<SimilarityView>(); }

}   // namespace headscope::ui
