// The Image view: attention over the picture's patches, and [CLS] of every head.

#include "core/analysis/rollout.h"
#include "core/models/model_registry.h"
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

namespace headscope::ui {

using namespace session;

class ImageView final : public View {
public:
    std::string_view name() const override { return "image"; }
    const char* title() const override { return "Image"; }
    std::string_view summary() const override {
        return "attention over the picture's patches, and [CLS] of every head";
    }
    void draw(ViewContext& context) override;
    std::string settings() const override {
        SettingsWriter out;
        out.set("average", own_.average)
            .set("column", own_.column)
            .set("keep_mass", own_.keep_mass)
            .set("keep_mass_share", static_cast<double>(own_.keep_mass_share));
        return out.text();
    }
    std::string restore(const std::string& settings) override {
        return read_settings(settings, own_, [](SettingsReader& in, Settings& into) {
            in.read("average", into.average);
            in.read("column", into.column);
            in.read("keep_mass", into.keep_mass);
            in.read("keep_mass_share", into.keep_mass_share, 0.01f, 0.99f);
        });
    }

    struct Settings {
        bool average = false;           // the average of the shown heads, not the selected one
        bool column = false;            // what attends to the patch, not what it attends to
        bool keep_mass = false;         // DINO's "keep x% of the mass" contours
        float keep_mass_share = 0.6f;   // DINO's default threshold
    };

private:
    Settings own_;
    void draw_patch_map(ViewContext& context, const Matrix& map, const std::string& key, int query);
    void draw_cls_of_every_head(ViewContext& context);
};

namespace {

// The map's choices: one head or the average, row or column, the kept share, the
// resolution. Returns the mode (0: the selected head, 1: the average of the shown heads).
int draw_map_options(const Snapshot& shown, AppState& state, ImageView::Settings& own) {
    constexpr const char* modes[] = {"selected head", "average of shown heads"};
    int mode = own.average ? 1 : 0;
    ImGui::SetNextItemWidth(px(220.0f));
    if (ImGui::Combo("##mode", &mode, modes, 2)) own.average = mode == 1;
    ImGui::SameLine();
    ImGui::Checkbox("what attends to it (column)", &own.column);
    ImGui::SameLine();
    ImGui::Checkbox("keep", &own.keep_mass);
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("DINO's threshold: outline the fewest patches that hold this share of the map's attention");
    }
    if (own.keep_mass) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(px(120.0f));
        float percent = own.keep_mass_share * 100.0f;
        if (ImGui::SliderFloat("% of the mass", &percent, 1.0f, 99.0f, "%.0f", ImGuiSliderFlags_AlwaysClamp)) {
            own.keep_mass_share = percent / 100.0f;
        }
    }
    if (!is_toy_model(shown.model.name)) {
        ImGui::SameLine();
        ImGui::Checkbox("own resolution", &state.own_resolution);
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Run the picture at its own size (whole patches, at most 1024) with the position "
                              "embeddings interpolated, as DINO draws its maps; off: the model's %d px",
                              shown.info.image_size);
        }
    }
    return mode;
}

// Patch lines only while patches are big enough to tell apart.
void draw_patch_lines(ImDrawList* draw, ImVec2 origin, float width, float height, int grid_w, int grid_h) {
    const float cw = width / static_cast<float>(grid_w);
    const float ch = height / static_cast<float>(grid_h);
    if (cw >= 6.0f && ch >= 6.0f) {
        for (int i = 1; i < grid_w; ++i) {
            draw->AddLine(ImVec2(origin.x + cw * i, origin.y), ImVec2(origin.x + cw * i, origin.y + height),
                          IM_COL32(0, 0, 0, 50));
        }
        for (int i = 1; i < grid_h; ++i) {
            draw->AddLine(ImVec2(origin.x, origin.y + ch * i), ImVec2(origin.x + width, origin.y + ch * i),
                          IM_COL32(0, 0, 0, 50));
        }
    }
}

}   // namespace

void ImageView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInput& input = shown.input;
    if (!shown.info.takes_image || shown.image.width == 0) {
        ImGui::TextWrapped("This view shows attention over an image: choose builtin:tiny-shapes or builtin:toy-vit, "
                           "or drop an image file on the window.");
        return;
    }
    const int grid_w = input.grid_width;
    const int grid_h = input.grid_height;
    const int prefix = input.n_prefix_tokens;
    const int query = state.query >= 0 ? state.query : 0;
    const auto n_heads = static_cast<int>(shown.info.n_heads);

    const int mode = draw_map_options(shown, state, own_);
    ImGui::Text("%s %s  (click a patch to choose it)", own_.column ? "attention to" : "attention from",
                input.labels[static_cast<std::size_t>(query)].c_str());
    colour_legend(state.colormap, "0", "the map's max", false);

    // The patch map: the query's row (or column) over the patches, one cell per patch.
    Matrix map = Matrix::Zero(grid_h, grid_w);
    int counted = 0;
    std::string averaged;   // which heads the map holds: part of its texture's key
    for (int h = 0; h < n_heads; ++h) {
        if (mode == 0 ? h != state.head : state.hidden_heads.off(state.layer, h)) continue;
        averaged += numbered(",", h);
        const std::shared_ptr<const Matrix> map_of_head = shown.head_map(state.layer, h);
        const Matrix& w = *map_of_head;
        for (int n = 0; n < grid_w * grid_h; ++n) {
            map(n / grid_w, n % grid_w) += own_.column ? w(prefix + n, query) : w(query, prefix + n);
        }
        ++counted;
    }
    if (counted == 0) {
        ImGui::TextDisabled("No head of layer %d is shown: tick \"show\" beside a head (left panel).", state.layer);
        return;
    }
    map /= static_cast<float>(counted);
    const std::string key = numbered("img", state.layer, state.head) + (own_.column ? "c" : "r") +
                            std::to_string(query) + "m" + std::to_string(mode) + averaged;
    draw_patch_map(context, map, key, query);
    ImGui::SameLine();
    draw_cls_of_every_head(context);
}

// The map over the picture, the kept region's outline, the query's patch; click a patch to choose it.
void ImageView::draw_patch_map(ViewContext& context, const Matrix& map, const std::string& key, int query) {
    session::AppState& state = context.state();
    const ModelInput& input = context.shown().input;
    const int grid_w = input.grid_width;
    const int grid_h = input.grid_height;
    const int prefix = input.n_prefix_tokens;
    const float max = std::max(map.maxCoeff(), 1e-12f);
    const HeatmapTexture& heat =
        context.textures().get(key, [&] { return heatmap_mip_levels(map, nullptr, state.colormap, max); });
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const auto [origin, width, height] =
        context.draw_picture_with_heat(heat, grid_w, grid_h, ImVec2(avail.x - px(220.0f), avail.y - px(110.0f)));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float cw = width / static_cast<float>(grid_w);
    const float ch = height / static_cast<float>(grid_h);
    draw_patch_lines(draw, origin, width, height, grid_w, grid_h);
    if (own_.keep_mass) {
        // The kept region's outline, in the patch grid's cells.
        const Eigen::Map<const RowVector> flat(map.data(), map.size());
        const std::vector<bool> kept = keep_mass(flat, own_.keep_mass_share);
        for (const GridSegment& g : mask_contours(kept, grid_w, grid_h)) {
            draw->AddLine(ImVec2(origin.x + cw * g.x0, origin.y + ch * g.y0),
                          ImVec2(origin.x + cw * g.x1, origin.y + ch * g.y1), IM_COL32(255, 255, 255, 255), 2.5f);
        }
    }
    if (query >= prefix) {
        const int n = query - prefix;
        const ImVec2 a(origin.x + cw * static_cast<float>(n % grid_w), origin.y + ch * static_cast<float>(n / grid_w));
        draw->AddRect(a, ImVec2(a.x + cw, a.y + ch), IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.0f);
    }
    if (ImGui::InvisibleButton("patches", ImVec2(width, height))) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int gx = cell_under(m.x, origin.x, cw, grid_w);
        const int gy = cell_under(m.y, origin.y, ch, grid_h);
        state.query = prefix + gy * grid_w + gx;
    }
}

namespace {

// A [CLS] thumbnail's head named in its corner, crossed out when disabled, and on hover
// what it shows.
void label_cls_thumbnail(const session::AppState& state, int head, float cls_max) {
    const ImVec2 a = ImGui::GetItemRectMin();
    const ImVec2 b = ImGui::GetItemRectMax();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const std::string name = std::to_string(state.layer) + "." + std::to_string(head);
    const ImVec2 size = ImGui::CalcTextSize(name.c_str());
    draw->AddRectFilled(ImVec2(a.x + 2.0f, a.y + 2.0f), ImVec2(a.x + size.x + 8.0f, a.y + size.y + 4.0f),
                        IM_COL32(0, 0, 0, 170));
    draw->AddText(ImVec2(a.x + 5.0f, a.y + 3.0f), IM_COL32(255, 255, 255, 255), name.c_str());
    if (state.disabled_heads.off(state.layer, head)) {
        draw->AddLine(ImVec2(a.x + 4.0f, a.y + 4.0f), ImVec2(b.x - 4.0f, b.y - 4.0f), IM_COL32(255, 80, 80, 230), 2.0f);
        draw->AddLine(ImVec2(b.x - 4.0f, a.y + 4.0f), ImVec2(a.x + 4.0f, b.y - 4.0f), IM_COL32(255, 80, 80, 230), 2.0f);
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("head %s: [CLS]'s attention over the patches (scaled to its max, %.3f)%s; click to select",
                          name.c_str(), static_cast<double>(cls_max),
                          state.disabled_heads.off(state.layer, head) ? ", disabled" : "");
    }
}

}   // namespace

// Beside the map: [CLS]'s row of every head of the layer, one thumbnail each; click one to select it.
void ImageView::draw_cls_of_every_head(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInput& input = shown.input;
    const int grid_w = input.grid_width;
    const int grid_h = input.grid_height;
    const int prefix = input.n_prefix_tokens;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    ImGui::BeginGroup();
    if (ImGui::Button("[CLS]")) state.query = 0;
    ImGui::TextUnformatted("[CLS] of every head:");
    const float thumbnail = px(96.0f);
    for (int h = 0; h < static_cast<int>(shown.info.n_heads); ++h) {
        Matrix cls(grid_h, grid_w);
        const std::shared_ptr<const Matrix> map_of_head = shown.head_map(state.layer, h);
        const Matrix& w = *map_of_head;
        for (int n = 0; n < grid_w * grid_h; ++n) cls(n / grid_w, n % grid_w) = w(0, prefix + n);
        const float cls_max = std::max(cls.maxCoeff(), 1e-12f);
        const HeatmapTexture& t = context.textures().get(
            numbered("cls", state.layer, h), [&] { return heatmap_mip_levels(cls, nullptr, state.colormap, cls_max); });
        if (h % 2) ImGui::SameLine();
        if (draw_heatmap_thumbnail(numbered("clsh", h).c_str(), t, thumbnail, h == state.head)) state.head = h;
        label_cls_thumbnail(state, h, cls_max);
        if (own_.keep_mass) {
            // Each head's own kept region, as DINO draws one mask per head.
            const ImVec2 at = ImGui::GetItemRectMin();
            const float tw = thumbnail / static_cast<float>(grid_w);
            const float th = thumbnail / static_cast<float>(grid_h);
            const Eigen::Map<const RowVector> flat(cls.data(), cls.size());
            for (const GridSegment& g : mask_contours(keep_mass(flat, own_.keep_mass_share), grid_w, grid_h)) {
                draw->AddLine(ImVec2(at.x + tw * g.x0, at.y + th * g.y0), ImVec2(at.x + tw * g.x1, at.y + th * g.y1),
                              IM_COL32(255, 255, 255, 255), 1.5f);
            }
        }
    }
    ImGui::EndGroup();
}

std::unique_ptr<View> make_image_view() { return std::make_unique<ImageView>(); }

}   // namespace headscope::ui
