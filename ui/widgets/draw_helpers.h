#pragma once
// Small drawing pieces the window's views share: colour legends, texture keys, the
// picture as a texture image.

#include "core/image/image.h"
#include "core/render/colormap.h"
#include "core/render/heatmap_image.h"

#include <imgui.h>

#include <string>

namespace headscope::ui {

// What the Model grid's metric frames and the head map's layer colours use: maps other
// than the heatmaps' default, so a frame never reads as a weight.
inline constexpr Colormap metric_colormap = Colormap::magma;
inline constexpr Colormap layer_colormap = Colormap::cividis;

// "prefix" + a (+ "." + b): texture keys and widget ids.
std::string numbered(const char* prefix, int a, int b = -1);

// A horizontal colour bar from `low` to `high` at the cursor (and the masked swatch).
// `show_not_finite`: the map holds NaN or Inf (e.g. from NaN weights), drawn in
// not_finite_colour; the legend then says so.
void colour_legend(Colormap map, const char* low, const char* high, bool show_masked = true,
                   bool show_not_finite = false);

// Cells a sliding window hides (keys W or more positions before the query): drawn over
// the map in their own colour, so the window's band reads apart from the causal mask.
inline constexpr Rgba8 outside_window_colour{70, 110, 190, 255};

// The swatch for outside_window_colour on the legend's line.
void window_legend(Eigen::Index window);

// Over a [rows, cols] map drawn with cell (0, 0) at `min`, `cell` px a side: every cell
// (i, j) with j <= i - window in outside_window_colour (one rectangle per row, never a
// [T, T] mask).
void draw_window_band(ImVec2 min, float cell, Eigen::Index rows, Eigen::Index cols, Eigen::Index window);

// An RGB picture as an opaque RGBA image for a texture.
RgbaImage rgba_of(const RgbImage& image);

// A hint in the disabled text colour after the last item: on the same line where it fits,
// else on the next, wrapped at the window's edge (a narrow window never cuts it off); or,
// where a panel's height has no line to spare (`may_wrap` false), as the last item's
// tooltip.
void hint_beside(const char* text, bool may_wrap = true);

// SameLine() where an item `width` px wide still fits on the current line; else the next
// item starts a line of its own: a row of controls wraps in a narrow window (or at a large
// content scale) instead of running off its edge.
void same_line_if_fits(float width);
// How wide a checkbox or radio button with `label` is; a slider or combo `box` px wide
// with its label; a colour legend with its two ends' words.
float check_width(const char* label);
float labelled_width(float box, const char* label);
float colour_legend_width(const char* low, const char* high);

// Ctrl+C pressed this frame, with no text box taking the keyboard: copy what is hovered.
bool copy_key_pressed();
// `text` to the clipboard (GLFW's, through Dear ImGui): what a Copy button or Ctrl+C gives.
void copy_to_clipboard(const std::string& text);

}   // namespace headscope::ui
