#pragma once
// One head's attention matrix as an ImGui widget: the heatmap texture, token labels
// on both axes (queries down the left, keys rotated along the top), and a tooltip
// with query, key, weight and pre-softmax score under the mouse. The map zooms and
// pans inside a fixed area (MapZoom, owned by the view that draws it): the wheel zooms
// about the pointer, a drag pans, a double-click or F fits the whole map again.

#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "core/render/visible_token.h"
#include "ui/widgets/heatmap_texture.h"
#include "ui/widgets/map_zoom.h"

#include <imgui.h>

#include <functional>
#include <string>
#include <vector>

namespace headscope::ui {

struct HeatmapLabels {
    std::vector<std::string> queries;   // [Tq]
    std::vector<std::string> keys;      // [Tk]
};

// Where draw_heatmap puts the cells when drawn at `origin` (its cursor position).
struct HeatmapGeometry {
    ImVec2 min;    // top-left of the map's area
    ImVec2 size;   // the area, in pixels: the whole map at fit
    float cell;    // side of one cell in pixels, zoomed
    float first_col = 0.0f;
    float first_row = 0.0f;
    // Where the corner of cell (row, col) is on screen.
    ImVec2 at(float row, float col) const {
        return ImVec2(min.x + (col - first_col) * cell, min.y + (row - first_row) * cell);
    }
    ImVec2 max() const { return ImVec2(min.x + size.x, min.y + size.y); }
    bool contains(ImVec2 p) const { return p.x >= min.x && p.y >= min.y && p.x < max().x && p.y < max().y; }
    int row_under(float y, int rows) const;
    int col_under(float x, int cols) const;
};
// `room`: the width and height the map and its labels may fill (a map of more keys than
// queries, as cross-attention's, uses the width a square one would leave).
HeatmapGeometry heatmap_geometry(const Matrix& weights, const HeatmapLabels& labels, ImVec2 room, ImVec2 origin,
                                 const MapZoom& zoom = {});

// What the pointer did on the map this frame.
enum class MapDrag {
    pans,     // a left drag pans (a click still pins a row)
    paints,   // the left button belongs to the caller (the mask editor); the middle one pans
};

// The lines of the tooltip over cell (row, col) of a map that is not a head's weights
// (called between ImGui::BeginTooltip and EndTooltip).
using HoverLines = std::function<void(int row, int col)>;

// Draws a head's `weights` (in `texture`, already uploaded; `scores` before the softmax
// for the tooltip, or null) filling at most `room` (with its labels), as `zoom` says
// (and changes it on the wheel, a drag, a double-click or F). `allowed` may be null (no
// mask). `pinned_row` (or -1) is outlined; returns the row clicked this frame, or -1.
// Another kind of map (head against head) says what a cell is through `hover`.
int draw_heatmap(const char* id, const Matrix& weights, const Matrix* scores, const Mask* allowed,
                 const HeatmapTexture& texture, const HeatmapLabels& labels, ImVec2 room, MapZoom& zoom,
                 MapDrag drag = MapDrag::pans, int pinned_row = -1, const HoverLines& hover = {});

// A small clickable thumbnail; returns true when clicked.
bool draw_heatmap_thumbnail(const char* id, const HeatmapTexture& texture, float side, bool selected);

}   // namespace headscope::ui
