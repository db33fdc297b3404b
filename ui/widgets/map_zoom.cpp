#include "ui/widgets/map_zoom.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

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

std::string zoom_json(const MapZoom& zoom) {
    return nlohmann::json{{"zoom", zoom.zoom}, {"first_col", zoom.first_col}, {"first_row", zoom.first_row}}.dump();
}

std::optional<MapZoom> zoom_from_json(const std::string& text, std::string& error) {
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    MapZoom zoom;
    const auto number = [&](const char* key, float& into, float low, float high) {
        const auto it = parsed.find(key);
        if (it == parsed.end()) return true;   // left out: as when the map fits
        if (!it->is_number() || !(it->get<float>() >= low && it->get<float>() <= high)) {
            char why[96];
            std::snprintf(why, sizeof why, "'%s': expected a number in %g..%g", key, static_cast<double>(low),
                          static_cast<double>(high));
            error = why;
            return false;
        }
        into = it->get<float>();
        return true;
    };
    if (!parsed.is_object()) {
        error = "expected an object";
        return std::nullopt;
    }
    if (!number("zoom", zoom.zoom, 1.0f, 1000.0f) || !number("first_col", zoom.first_col, 0.0f, 1e9f) ||
        !number("first_row", zoom.first_row, 0.0f, 1e9f)) {
        return std::nullopt;
    }
    return zoom;
}

}   // namespace headscope::ui
