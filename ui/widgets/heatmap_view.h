#pragma once
// One head's attention matrix as an ImGui widget: the heatmap texture, token labels
// on both axes (queries down the left, keys rotated along the top), and a tooltip
// with query, key, weight and pre-softmax score under the mouse.

#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "ui/widgets/heatmap_texture.h"

#include <string>
#include <vector>

namespace headscope::ui {

struct HeatmapLabels {
    std::vector<std::string> queries;   // [Tq]
    std::vector<std::string> keys;      // [Tk]
};

// Draws a head's `weights` (in `texture`, already uploaded; `scores` before the softmax
// for the tooltip, or null) filling at most `max_side` pixels square. `allowed` may be null (no mask). `pinned_row` (or
// -1) is outlined; returns the row clicked this frame, or -1.
int draw_heatmap(const char* id, const Matrix& weights, const Matrix* scores, const Mask* allowed,
                 const HeatmapTexture& texture, const HeatmapLabels& labels, float max_side, int pinned_row = -1);

// Where draw_heatmap puts the cells when drawn at `origin` (its cursor position).
struct HeatmapGeometry {
    ImVec2 min;   // top-left of cell (0, 0)
    float cell;   // side of one cell in pixels
};
HeatmapGeometry heatmap_geometry(const Matrix& weights, const HeatmapLabels& labels, float max_side, ImVec2 origin);

// A small clickable thumbnail; returns true when clicked.
bool draw_heatmap_thumbnail(const char* id, const HeatmapTexture& texture, float side, bool selected);

}   // namespace headscope::ui
