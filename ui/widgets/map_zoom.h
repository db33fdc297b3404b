#pragma once
// How much of a [rows, cols] map is in sight: the zoom (1: the whole map fits its area)
// and the map point, in cells, at the area's top-left corner. Plain arithmetic with no
// window, so the zoom about the pointer, the pan and their limits are tested alone; the
// view that draws the map owns one (ui/widgets/heatmap_view.h).

#include "session/export_map.h"
#include "session/view_settings.h"

#include <optional>
#include <string>

namespace headscope::ui {

struct MapZoom {
    float zoom = 1.0f;
    float first_col = 0.0f;   // cells: the area's left edge
    float first_row = 0.0f;   // cells: the area's top edge
    bool operator==(const MapZoom& other) const = default;
};

// The most a map zooms in: until a cell is `max_cell_px` pixels (never below 1: a map
// whose cells are that big already does not zoom).
float max_zoom(float fit_cell_px, float max_cell_px = 48.0f);

// Zooms by `factor` about the map point (col, row) under the pointer, which stays under
// it; the zoom is kept in 1..max_zoom and the view inside the map.
void zoom_about(MapZoom& zoom, float factor, float col, float row, int rows, int cols, float fit_cell_px);

// Moves the view by (d_cols, d_rows) cells, kept inside the map.
void pan(MapZoom& zoom, float d_cols, float d_rows, int rows, int cols);

// Keeps the view inside a map of rows x cols (after the map changed size, too).
void keep_inside(MapZoom& zoom, int rows, int cols);

// The cells in sight: [first, first + count) along each axis, count = n / zoom.
float cols_in_sight(const MapZoom& zoom, int cols);
float rows_in_sight(const MapZoom& zoom, int rows);

// The cells at least partly in sight, or nullopt when the whole map is (zoom 1).
std::optional<session::MapRegion> region_in_sight(const MapZoom& zoom, int rows, int cols);

// The zoom among a view's settings (session/view_settings.h) as sessions keep it:
// "zoom", "first_col", "first_row". Read back, the zoom must be 1..1000 and the corner at
// cells 0 or more; the map's own limits apply when it is next drawn (keep_inside).
void write_zoom(session::SettingsWriter& out, const MapZoom& zoom);
void read_zoom(session::SettingsReader& in, MapZoom& zoom);

// The map cell (fractional) under a point `px` pixels into the area along one axis.
inline float cell_at(float first, float px, float cell_px) { return first + px / cell_px; }

}   // namespace headscope::ui
