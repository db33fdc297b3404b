#pragma once
// Small drawing pieces the window's views share: colour legends, texture keys, the
// picture as a texture image.

#include "core/image/image.h"
#include "core/render/colormap.h"
#include "core/render/heatmap_image.h"

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

// An RGB picture as an opaque RGBA image for a texture.
RgbaImage rgba_of(const RgbImage& image);

}   // namespace headscope::ui
