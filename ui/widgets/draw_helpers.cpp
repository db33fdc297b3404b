#include "ui/widgets/draw_helpers.h"

#include "core/render/heatmap_image.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <algorithm>
#include <string>

namespace headscope::ui {

std::string numbered(const char* prefix, int a, int b) {
    std::string s(prefix);
    s += std::to_string(a);
    if (b >= 0) {
        s += '.';
        s += std::to_string(b);
    }
    return s;
}

namespace {

void swatch(ImDrawList* draw, Rgba8 colour, float height, const char* label) {
    // The square and its word stay together; together they wrap.
    same_line_if_fits(height + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(label).x);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(at, ImVec2(at.x + height, at.y + height), IM_COL32(colour.r, colour.g, colour.b, 255));
    ImGui::Dummy(ImVec2(height, height));
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
}

constexpr float legend_bar_width = 180.0f;   // at 1x (ui_scale.h)

}   // namespace

void colour_legend(Colormap map, const char* low, const char* high, bool show_masked, bool show_not_finite) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = px(legend_bar_width);
    const float height = ImGui::GetTextLineHeight();
    constexpr int steps = 64;
    for (int i = 0; i < steps; ++i) {
        const Rgba8 c = colormap_lookup(map, static_cast<float>(i) / (steps - 1));
        const float x0 = origin.x + width * static_cast<float>(i) / steps;
        draw->AddRectFilled(ImVec2(x0, origin.y), ImVec2(x0 + width / steps + 1.0f, origin.y + height),
                            IM_COL32(c.r, c.g, c.b, 255));
    }
    ImGui::Dummy(ImVec2(width, height));
    std::string ends(low);
    ends.append(" .. ").append(high);
    same_line_if_fits(ImGui::CalcTextSize(ends.c_str()).x);
    ImGui::TextUnformatted(ends.c_str());
    if (show_masked) swatch(draw, masked_colour, height, "masked");
    if (show_not_finite) swatch(draw, not_finite_colour, height, "not finite (NaN / Inf)");
}

void window_legend(Eigen::Index window) {
    const std::string label = "outside the window of " + std::to_string(window) + " keys";
    swatch(ImGui::GetWindowDrawList(), outside_window_colour, ImGui::GetTextLineHeight(), label.c_str());
}

void draw_window_band(ImVec2 min, float cell, Eigen::Index rows, Eigen::Index cols, Eigen::Index window) {
    if (window <= 0) return;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const Rgba8 c = outside_window_colour;
    for (Eigen::Index i = window; i < rows; ++i) {
        const Eigen::Index hidden = std::min(i - window + 1, cols);   // keys 0 .. i - W
        const float top = min.y + cell * static_cast<float>(i);
        draw->AddRectFilled(ImVec2(min.x, top), ImVec2(min.x + cell * static_cast<float>(hidden), top + cell),
                            IM_COL32(c.r, c.g, c.b, 255));
    }
}

RgbaImage rgba_of(const RgbImage& image) {
    RgbaImage out;
    out.width = image.width;
    out.height = image.height;
    out.pixels.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4);
    for (std::size_t i = 0, j = 0; i < image.pixels.size(); i += 3, j += 4) {
        out.pixels[j] = image.pixels[i];
        out.pixels[j + 1] = image.pixels[i + 1];
        out.pixels[j + 2] = image.pixels[i + 2];
        out.pixels[j + 3] = 255;
    }
    return out;
}

void hint_beside(const char* text, bool may_wrap) {
    const bool item_hovered = ImGui::IsItemHovered();
    ImGui::SameLine();
    const bool fits = ImGui::GetContentRegionAvail().x >= ImGui::CalcTextSize(text).x;
    if (!fits && !may_wrap) {
        ImGui::NewLine();
        if (item_hovered) ImGui::SetTooltip("%s", text);
        return;
    }
    if (!fits) ImGui::NewLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", text);
    ImGui::PopStyleColor();
}

void same_line_if_fits(float width) {
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

float check_width(const char* label) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

float labelled_width(float box, const char* label) {
    const float text = ImGui::CalcTextSize(label, nullptr, true).x;
    return box + (text > 0.0f ? ImGui::GetStyle().ItemInnerSpacing.x + text : 0.0f);
}

float colour_legend_width(const char* low, const char* high) {
    return px(legend_bar_width) + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(low).x +
           ImGui::CalcTextSize(" .. ").x + ImGui::CalcTextSize(high).x;
}

bool copy_key_pressed() {
    const ImGuiIO& io = ImGui::GetIO();
    return io.KeyCtrl && !io.WantTextInput && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_C), false);
}

void copy_to_clipboard(const std::string& text) { ImGui::SetClipboardText(text.c_str()); }

}   // namespace headscope::ui
