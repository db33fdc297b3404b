// The Image view: attention over the picture's patches, and [CLS] of every head.

#include "core/analysis/high_norm_tokens.h"
#include "core/analysis/rollout.h"
#include "core/models/model_registry.h"
#include "core/render/colormap.h"
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
        return "attention over the picture's patches, and [CLS] (or SigLIP's pooling probe) of every head";
    }
    void draw(ViewContext& context) override;
    std::string settings() const override {
        SettingsWriter out;
        out.set("average", own_.average)
            .set("column", own_.column)
            .set("keep_mass", own_.keep_mass)
            .set("keep_mass_share", static_cast<double>(own_.keep_mass_share))
            .set("registers_in_scale", own_.registers_in_scale)
            .set("mark_high_norm", own_.mark_high_norm)
            .set("probe", own_.probe);
        return out.text();
    }
    std::string restore(const std::string& settings) override {
        return read_settings(settings, own_, [](SettingsReader& in, Settings& into) {
            in.read("average", into.average);
            in.read("column", into.column);
            in.read("keep_mass", into.keep_mass);
            in.read("keep_mass_share", into.keep_mass_share, 0.01f, 0.99f);
            in.read("registers_in_scale", into.registers_in_scale);
            in.read("mark_high_norm", into.mark_high_norm);
            in.read("probe", into.probe);
        });
    }

    struct Settings {
        bool average = false;              // the average of the shown heads, not the selected one
        bool column = false;               // what attends to the patch, not what it attends to
        bool keep_mass = false;            // DINO's "keep x% of the mass" contours
        float keep_mass_share = 0.6f;      // DINO's default threshold
        bool registers_in_scale = false;   // the colours scaled to the registers' weights too, not the patches' alone
        bool mark_high_norm = true;        // circle the high-norm patches (core/analysis/high_norm_tokens.h)
        bool probe = false;   // the pooling probe's map (SigLIP, ModelTrace::probe_maps), not a token's row
    };

private:
    Settings own_;
    void draw_patch_map(ViewContext& context, const Matrix& map, float scale_max, const std::string& key, int query);
    void draw_registers(ViewContext& context, const Vector& prefix_weights, float patch_share, float scale_max,
                        int query);
    void draw_cls_of_every_head(ViewContext& context);
    void draw_probe(ViewContext& context, int mode);
    void draw_probe_of_every_head(ViewContext& context);
    // The probe's map of the selected head, or the average of its heads (mode 1), over the grid.
    Matrix probe_map(const Snapshot& shown, int head, int mode) const;
};

namespace {

// The registers' column beside the picture: a register's cell, its name and weight.
float register_column_width() { return px(200.0f); }

// The map's choices: one head or the average, row or column, the kept share, the registers
// in the colour scale and the high-norm marks (where the model has them), the resolution. Returns the mode (0: the
// selected head, 1: the average of the shown heads).
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
    if (shown.input.n_register_tokens > 0) {
        same_line_if_fits(check_width("registers in the scale"));
        ImGui::Checkbox("registers in the scale", &own.registers_in_scale);
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Scale the colours to the largest weight on a patch or a register; off: to the "
                              "patches alone, so registers that soak up the attention do not leave them dark");
        }
    }
    if (shown.trace.output_norms.size() > 0) {
        same_line_if_fits(check_width("mark high-norm patches"));
        ImGui::Checkbox("mark high-norm patches", &own.mark_high_norm);
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Circle the patches whose output (after the last layer, before the final norm) has "
                              "more than %.0fx the patches' median norm: the artefact tokens that soak up [CLS]'s "
                              "attention in models without registers (Darcet et al., 2024)",
                              static_cast<double>(high_norm_factor));
        }
    }
    if (!is_toy_model(shown.model.name)) {
        same_line_if_fits(check_width("own resolution"));
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
    const Eigen::Index probe_heads = shown.trace.probe_maps.rows();
    if (own_.probe && probe_heads > 0) {
        draw_probe(context, mode);
        return;
    }
    ImGui::Text("%s %s  (click a patch to choose it)", own_.column ? "attention to" : "attention from",
                input.labels[static_cast<std::size_t>(query)].c_str());
    const int n_registers = input.n_register_tokens;
    const bool registers_scaled = n_registers > 0 && own_.registers_in_scale;
    colour_legend(state.colormap, "0", registers_scaled ? "the max over patches and registers" : "the map's max",
                  false);

    // The patch map: the query's row (or column) over the patches, one cell per patch; and
    // its weights on (or from) the tokens before the patches.
    Matrix map = Matrix::Zero(grid_h, grid_w);
    Vector prefix_weights = Vector::Zero(prefix);
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
        for (int t = 0; t < prefix; ++t) prefix_weights(t) += own_.column ? w(t, query) : w(query, t);
        ++counted;
    }
    if (counted == 0) {
        ImGui::TextDisabled("No head of layer %d is shown: tick \"show\" beside a head (left panel).", state.layer);
        return;
    }
    map /= static_cast<float>(counted);
    prefix_weights /= static_cast<float>(counted);
    float scale_max = map.maxCoeff();
    if (registers_scaled) scale_max = std::max(scale_max, prefix_weights.segment(1, n_registers).maxCoeff());
    scale_max = std::max(scale_max, 1e-12f);
    const std::string key = numbered("img", state.layer, state.head) + (own_.column ? "c" : "r") +
                            std::to_string(query) + "m" + std::to_string(mode) + (registers_scaled ? "s" : "") +
                            averaged;
    draw_patch_map(context, map, scale_max, key, query);
    ImGui::SameLine();
    if (n_registers > 0) {
        draw_registers(context, prefix_weights, map.sum(), scale_max, query);
        ImGui::SameLine();
    }
    if (probe_heads > 0) {
        draw_probe_of_every_head(context);
    } else if (prefix > 0) {
        draw_cls_of_every_head(context);
    }
}

// The pooling probe's map over the picture (the selected head's, or their average), and beside
// it every head's.
void ImageView::draw_probe(ViewContext& context, int mode) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const Eigen::Index probe_heads = shown.trace.probe_maps.rows();
    const int head = std::clamp(state.head, 0, static_cast<int>(probe_heads) - 1);
    if (mode == 0) {
        ImGui::Text("the pooling probe's attention, head %d, over the last layer's output  (click a patch to "
                    "choose it)",
                    head);
    } else {
        ImGui::Text("the pooling probe's attention, the average of its %d heads, over the last layer's output",
                    static_cast<int>(probe_heads));
    }
    colour_legend(state.colormap, "0", "the map's max", false);
    const Matrix map = probe_map(shown, head, mode);
    draw_patch_map(context, map, std::max(map.maxCoeff(), 1e-12f), numbered("probe", head, mode), -1);
    ImGui::SameLine();
    draw_probe_of_every_head(context);
}

Matrix ImageView::probe_map(const Snapshot& shown, int head, int mode) const {
    const ModelInput& input = shown.input;
    const Matrix& probe = shown.trace.probe_maps;   // [H, T]
    const int prefix = input.n_prefix_tokens;
    Matrix map(input.grid_height, input.grid_width);
    for (int n = 0; n < input.grid_width * input.grid_height; ++n) {
        map(n / input.grid_width, n % input.grid_width) =
            mode == 0 ? probe(head, prefix + n) : probe.col(prefix + n).mean();
    }
    return map;
}

// The map over the picture, the kept region's outline, the query's patch; click a patch to choose it.
void ImageView::draw_patch_map(ViewContext& context, const Matrix& map, float scale_max, const std::string& key,
                               int query) {
    session::AppState& state = context.state();
    const ModelInput& input = context.shown().input;
    const int grid_w = input.grid_width;
    const int grid_h = input.grid_height;
    const int prefix = input.n_prefix_tokens;
    const HeatmapTexture& heat =
        context.textures().get(key, [&] { return heatmap_mip_levels(map, nullptr, state.colormap, scale_max); });
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    // Room beside the picture for the [CLS] thumbnails, and the registers' column where there are registers.
    const float beside = px(220.0f) + (input.n_register_tokens > 0 ? register_column_width() : 0.0f);
    const auto [origin, width, height] =
        context.draw_picture_with_heat(heat, grid_w, grid_h, ImVec2(avail.x - beside, avail.y - px(110.0f)));
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
    const HighNormTokens high_norm =
        own_.mark_high_norm ? high_norm_tokens(context.shown().trace.output_norms, prefix) : HighNormTokens{};
    for (const int token : high_norm.tokens) {
        const int n = token - prefix;
        const ImVec2 centre(origin.x + cw * (static_cast<float>(n % grid_w) + 0.5f),
                            origin.y + ch * (static_cast<float>(n / grid_w) + 0.5f));
        draw->AddCircle(centre, std::max(2.0f, 0.3f * std::min(cw, ch)), IM_COL32(255, 96, 64, 255), 0, 2.0f);
    }
    const bool clicked = ImGui::InvisibleButton("patches", ImVec2(width, height));
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int under = prefix + cell_under(m.y, origin.y, ch, grid_h) * grid_w + cell_under(m.x, origin.x, cw, grid_w);
    if (clicked) {
        state.query = under;
        own_.probe = false;   // a patch's own row from now on
    }
    if (ImGui::IsItemHovered() &&
        std::find(high_norm.tokens.begin(), high_norm.tokens.end(), under) != high_norm.tokens.end()) {
        const float norm = context.shown().trace.output_norms(under);
        ImGui::SetTooltip("%s: a high-norm patch, output norm %.1f (%.1fx the patches' median, %.1f)",
                          input.labels[static_cast<std::size_t>(under)].c_str(), static_cast<double>(norm),
                          static_cast<double>(norm / high_norm.median), static_cast<double>(high_norm.median));
    }
}

// Beside the picture, a column: the query's weight on each register (or each register's on
// the query), coloured on the map's scale, and the shares of its attention; click one to
// choose it.
void ImageView::draw_registers(ViewContext& context, const Vector& prefix_weights, float patch_share, float scale_max,
                               int query) {
    session::AppState& state = context.state();
    const ModelInput& input = context.shown().input;
    const int n_registers = input.n_register_tokens;
    const std::string& who = input.labels[static_cast<std::size_t>(query)];
    ImGui::BeginGroup();
    // The wrap position is the window's own x, not the screen's.
    ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + register_column_width() - px(10.0f));
    if (own_.column) {
        ImGui::TextWrapped("registers: their attention to %s", who.c_str());
    } else {
        ImGui::TextWrapped("registers: %s's attention to each", who.c_str());
    }
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float cell = ImGui::GetFrameHeight();
    for (int r = 0; r < n_registers; ++r) {
        const int token = 1 + r;   // registers follow [CLS]
        const float value = prefix_weights(token);
        const std::string label = input.labels[static_cast<std::size_t>(token)];
        char text[64];
        std::snprintf(text, sizeof text, "%s %.3f", label.c_str(), static_cast<double>(value));
        ImGui::BeginGroup();
        const ImVec2 a = ImGui::GetCursorScreenPos();
        if (ImGui::InvisibleButton(numbered("register", r).c_str(), ImVec2(cell, cell))) state.query = token;
        const bool hovered = ImGui::IsItemHovered();
        const Rgba8 c = colormap_lookup(state.colormap, std::clamp(value / scale_max, 0.0f, 1.0f));
        draw->AddRectFilled(a, ImVec2(a.x + cell, a.y + cell), IM_COL32(c.r, c.g, c.b, 255));
        if (value > scale_max || token == query) {
            // Past the map's scale (its colour is the top one), or the query itself.
            draw->AddRect(a, ImVec2(a.x + cell, a.y + cell), IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.0f);
        }
        ImGui::SameLine();
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(text);
        ImGui::EndGroup();
        if (hovered) {
            ImGui::SetTooltip(own_.column ? "%s: weight %.4f%s; click to show what attends to it"
                                          : "%s: weight %.4f%s; click to show its own attention",
                              label.c_str(), static_cast<double>(value),
                              value > scale_max ? ", past the patches' colour scale (tick \"registers in the scale\")"
                                                : "");
        }
    }
    if (!own_.column) {
        const double to_registers = prefix_weights.segment(1, n_registers).sum();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("the registers take %.0f%% of its attention, [CLS] %.0f%%, the patches %.0f%%",
                           100.0 * to_registers, 100.0 * prefix_weights(0), 100.0 * patch_share);
        ImGui::PopStyleColor();
    }
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
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

// Beside the map: the pooling probe's map of every head (SigLIP: the picture's embedding is
// its output), one thumbnail each; click one to show it.
void ImageView::draw_probe_of_every_head(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const auto n_heads = static_cast<int>(shown.trace.probe_maps.rows());
    ImGui::BeginGroup();
    if (ImGui::Button("probe")) own_.probe = true;
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("The attention-pooling head's learned probe: one query over the last layer's output, "
                          "whose result is the picture's embedding");
    }
    ImGui::TextUnformatted("the pooling probe, every head:");
    const float thumbnail = px(96.0f);
    for (int h = 0; h < n_heads; ++h) {
        const Matrix map = probe_map(shown, h, 0);
        const float map_max = std::max(map.maxCoeff(), 1e-12f);
        const HeatmapTexture& t = context.textures().get(
            numbered("probeh", h), [&] { return heatmap_mip_levels(map, nullptr, state.colormap, map_max); });
        if (h % 2) ImGui::SameLine();
        if (draw_heatmap_thumbnail(numbered("probeh", h).c_str(), t, thumbnail, own_.probe && h == state.head)) {
            state.head = h;
            own_.probe = true;
        }
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("probe head %d: its attention over the patches (scaled to its max, %.3f); click to show",
                              h, static_cast<double>(map_max));
        }
    }
    ImGui::EndGroup();
}

std::unique_ptr<View> make_image_view() { return std::make_unique<ImageView>(); }

}   // namespace headscope::ui
