#pragma once
// The ui's fixed sizes (panel widths, thumbnails, plot heights, column widths) are written
// as pixels at 1x; px() turns them into pixels at the window's content scale. The scale is
// read from the font, which the program loads at 15 px times the content scale (the
// monitor's, or --scale's): sizes then keep their proportion to the text they hold, so a
// window at 2x looks as it does at 1x, twice as large. (Without DejaVu Sans, ImGui's own
// 13 px font is used and the sizes shrink with it: still in proportion to the text.)

#include <imgui.h>

namespace headscope::ui {

inline constexpr float reference_font_px = 15.0f;

inline float content_scale() { return ImGui::GetFontSize() / reference_font_px; }

inline float px(float at_1x) { return at_1x * content_scale(); }

inline ImVec2 px(float width_at_1x, float height_at_1x) { return ImVec2(px(width_at_1x), px(height_at_1x)); }

}   // namespace headscope::ui
