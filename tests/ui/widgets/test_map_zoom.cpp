// The zoom and pan of a map (ui/widgets/map_zoom.h): the point under the pointer stays
// under it, the view never leaves the map, and the zoom stays between fit and the
// largest cell.

#include "ui/widgets/map_zoom.h"

#include <doctest/doctest.h>

using headscope::ui::cell_at;
using headscope::ui::cols_in_sight;
using headscope::ui::keep_inside;
using headscope::ui::MapZoom;
using headscope::ui::max_zoom;
using headscope::ui::pan;
using headscope::ui::read_zoom;
using headscope::ui::rows_in_sight;
using headscope::ui::write_zoom;
using headscope::ui::zoom_about;

TEST_CASE("map zoom: the cell under the pointer stays under it") {
    // 1,000 tokens on 800 px: 0.8 px a cell at fit.
    const float fit = 0.8f;
    MapZoom zoom;
    const float px = 600.0f;   // the pointer, 600 px into the area (both axes)
    const float before = cell_at(zoom.first_col, px, fit * zoom.zoom);
    CHECK(before == doctest::Approx(750.0f));
    zoom_about(zoom, 4.0f, before, before, 1000, 1000, fit);
    CHECK(zoom.zoom == doctest::Approx(4.0f));
    CHECK(cell_at(zoom.first_col, px, fit * zoom.zoom) == doctest::Approx(750.0f));
    CHECK(cell_at(zoom.first_row, px, fit * zoom.zoom) == doctest::Approx(750.0f));
    CHECK(cols_in_sight(zoom, 1000) == doctest::Approx(250.0f));
    // Back out: the same point stays, and at zoom 1 the whole map is in sight again.
    zoom_about(zoom, 0.25f, 750.0f, 750.0f, 1000, 1000, fit);
    CHECK(zoom == MapZoom{});
}

TEST_CASE("map zoom: limits: fit at the least, cells of 48 px at the most, the view inside the map") {
    MapZoom zoom;
    zoom_about(zoom, 0.5f, 10.0f, 10.0f, 100, 100, 8.0f);   // out past fit: nothing moves
    CHECK(zoom == MapZoom{});
    zoom_about(zoom, 100.0f, 100.0f, 100.0f, 100, 100, 8.0f);   // cells of 8 px grow to 48 at most
    CHECK(zoom.zoom == doctest::Approx(6.0f));
    CHECK(zoom.first_col == doctest::Approx(100.0f - 100.0f / 6.0f));   // the bottom-right corner, not past it
    CHECK(zoom.first_row + rows_in_sight(zoom, 100) == doctest::Approx(100.0f));
    MapZoom near_corner;   // a point near the corner stays where it was on screen
    zoom_about(near_corner, 6.0f, 99.0f, 99.0f, 100, 100, 8.0f);
    CHECK(near_corner.first_col == doctest::Approx(99.0f - 99.0f / 6.0f));
    CHECK(max_zoom(80.0f) == 1.0f);   // a short sentence's cells are big enough already
    CHECK(max_zoom(0.0f) == 1.0f);

    pan(zoom, -1000.0f, -1000.0f, 100, 100);   // dragged far past the corner
    CHECK(zoom.first_col == 0.0f);
    CHECK(zoom.first_row == 0.0f);
    pan(zoom, 3.0f, 2.0f, 100, 100);
    CHECK(zoom.first_col == doctest::Approx(3.0f));
    CHECK(zoom.first_row == doctest::Approx(2.0f));
}

TEST_CASE("map zoom: a shorter map keeps the view inside it, a non-square one per axis") {
    MapZoom zoom{4.0f, 700.0f, 700.0f};
    keep_inside(zoom, 200, 1000);   // the input got shorter: 200 queries, 1,000 keys
    CHECK(zoom.first_row == doctest::Approx(150.0f));
    CHECK(zoom.first_col == doctest::Approx(700.0f));
    MapZoom odd{0.5f, -3.0f, 2.0f};   // never below fit, never before the first cell
    keep_inside(odd, 10, 10);
    CHECK(odd == MapZoom{});
}

TEST_CASE("map zoom: the cells in sight, any part of them, for exporting the part shown") {
    CHECK_FALSE(region_in_sight(MapZoom{}, 100, 100).has_value());   // fit: the whole map
    // 4x on 100 x 100: 25 cells a side from (10.5, 20): cells 10..35 and 20..44.
    const MapZoom zoom{4.0f, 10.5f, 20.0f};
    CHECK(region_in_sight(zoom, 100, 100) == headscope::session::MapRegion{20, 10, 25, 26});
    // At the far corner, never past the map.
    MapZoom corner{4.0f, 75.0f, 75.0f};
    CHECK(region_in_sight(corner, 100, 100) == headscope::session::MapRegion{75, 75, 25, 25});
    // An edge a float error past a whole cell does not add the next one.
    const MapZoom almost{4.0f, 9.9999995f, 0.0f};
    CHECK(region_in_sight(almost, 100, 100) == headscope::session::MapRegion{0, 10, 25, 25});
}

TEST_CASE("map zoom: kept in a session among a view's settings and read back, a bad one refused with why") {
    const MapZoom zoom{3.8f, 12.25f, 40.5f};
    headscope::session::SettingsWriter out;
    write_zoom(out, zoom);
    MapZoom back;
    headscope::session::SettingsReader in(out.text());
    read_zoom(in, back);
    CHECK(in.ok());
    CHECK(back == zoom);
    const auto read_text = [](const char* text, MapZoom& into) {
        headscope::session::SettingsReader reader(text);
        read_zoom(reader, into);
        return reader.error();
    };
    MapZoom kept = zoom;
    CHECK(read_text("{}", kept).empty());
    CHECK(kept == zoom);   // nothing saved of the zoom: left as it was
    CHECK(read_text(R"({"zoom": 0.5})", kept) == "'zoom': expected a number in 1..1000");
    CHECK(read_text(R"({"first_col": "left"})", kept) == "'first_col': expected a number in 0..1e+09");
    CHECK(read_text("[1]", kept) == "expected a JSON object of settings, {...}");
}
