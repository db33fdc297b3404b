#include "ui/widgets/map_zoom.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

std::optional<session::MapRegion> region_in_sight(const MapZoom& zoom, int rows, int cols) {
    if (zoom.zoom <= 1.0f || rows < 1 || cols < 1) return std::nullopt;
    // A cell counts once any part of it shows; a float error of a millionth of a cell
    // must not add a sliver of the next one.
    constexpr float sliver = 1e-3f;
    const auto span = [](float first, float count, int n) {
        const int begin = std::clamp(static_cast<int>(std::floor(first + sliver)), 0, n - 1);
        const int end = std::clamp(static_cast<int>(std::ceil(first + count - sliver)), begin + 1, n);
        return std::pair<int, int>{begin, end - begin};
    };
    const auto [first_row, n_rows] = span(zoom.first_row, rows_in_sight(zoom, rows), rows);
    const auto [first_col, n_cols] = span(zoom.first_col, cols_in_sight(zoom, cols), cols);
    return session::MapRegion{first_row, first_col, n_rows, n_cols};
}

void write_zoom(session::SettingsWriter& out, const MapZoom& zoom) {
    out.set("zoom", static_cast<double>(zoom.zoom))
        .set("first_col", static_cast<double>(zoom.first_col))
        .set("first_row", static_cast<double>(zoom.first_row));
}

void read_zoom(session::SettingsReader& in, MapZoom& zoom) {
    in.read("zoom", zoom.zoom, 1.0f, 1000.0f);
    in.read("first_col", zoom.first_col, 0.0f, 1e9f);
    in.read("first_row", zoom.first_row, 0.0f, 1e9f);
}

}   // namespace headscope::ui
