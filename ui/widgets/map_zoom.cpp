#include "ui/widgets/map_zoom.h"

#include <algorithm>

namespace headscope::ui {

float max_zoom(float fit_cell_px, float max_cell_px) {
    return fit_cell_px > 0.0f ? std::max(1.0f, max_cell_px / fit_cell_px) : 1.0f;
}

float cols_in_sight(const MapZoom& zoom, int cols) { return static_cast<float>(cols) / zoom.zoom; }
float rows_in_sight(const MapZoom& zoom, int rows) { return static_cast<float>(rows) / zoom.zoom; }

void keep_inside(MapZoom& zoom, int rows, int cols) {
    zoom.zoom = std::max(zoom.zoom, 1.0f);
    zoom.first_col = std::clamp(zoom.first_col, 0.0f, static_cast<float>(cols) - cols_in_sight(zoom, cols));
    zoom.first_row = std::clamp(zoom.first_row, 0.0f, static_cast<float>(rows) - rows_in_sight(zoom, rows));
}

void zoom_about(MapZoom& zoom, float factor, float col, float row, int rows, int cols, float fit_cell_px) {
    const float next = std::clamp(zoom.zoom * factor, 1.0f, max_zoom(fit_cell_px));
    const float applied = next / zoom.zoom;
    // The point's distance from the area's corner, in cells, shrinks by the factor applied.
    zoom.first_col = col - (col - zoom.first_col) / applied;
    zoom.first_row = row - (row - zoom.first_row) / applied;
    zoom.zoom = next;
    keep_inside(zoom, rows, cols);
}

void pan(MapZoom& zoom, float d_cols, float d_rows, int rows, int cols) {
    zoom.first_col += d_cols;
    zoom.first_row += d_rows;
    keep_inside(zoom, rows, cols);
}

}   // namespace headscope::ui
