// A map as SVG (core/render/map_svg.h), read back by an XML parser that is not ours
// (Python's xml.etree): it parses, holds one rect per cell in the colour the PNG uses,
// and labels in any script, markup and broken bytes included, as text (spaces and
// line ends shown as the window shows them).

#include "core/base/error.h"
#include "core/render/heatmap_image.h"
#include "core/render/map_svg.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

using namespace headscope;
using headscope::test::TempDir;

namespace {

// What Python's XML parser reads from `path`: the cells' fills and titles, then every
// label's text, one per line.
std::string parsed(const TempDir& dir, const std::string& path) {
    const std::string script = "import sys, xml.etree.ElementTree as E\n"
                               "ns = '{http://www.w3.org/2000/svg}'\n"
                               "root = E.parse(sys.argv[1]).getroot()\n"
                               "for g in root.iter(ns + 'g'):\n"
                               "    for e in g:\n"
                               "        if e.get('class') == 'cell':\n"
                               "            print('cell', e.get('fill'), e.find(ns + 'title').text)\n"
                               "        elif e.tag == ns + 'text':\n"
                               "            print(g.get('id'), e.text)\n";
    const std::string script_path = dir.file("read_svg.py");
    std::ofstream(script_path) << script;
    const std::string command = "/usr/bin/python3 '" + script_path + "' '" + path + "' 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    REQUIRE(pipe);
    std::string out;
    std::array<char, 4096> buffer{};
    while (fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
    return out;
}

std::string hex(Rgba8 c) {
    char text[8];
    std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
    return text;
}

}   // namespace

TEST_CASE("map svg: parses, one rect per cell in the PNG's colour, every label as text") {
    Matrix weights(2, 3);
    weights << 1.0f, 0.0f, 0.0f, 0.25f, 0.75f, 0.0f;
    Mask allowed(2, 3);
    allowed << true, false, false, true, true, false;
    const std::vector<std::string> queries = {"<s>", " a & b\n"};
    const std::vector<std::string> shown_queries = {"<s>", "\u00b7a\u00b7&\u00b7b\u21b5"};   // as the window shows them
    const std::vector<std::string> keys = {"\"q\"", "\xc3\xa9t\xc3\xa9",
                                           "cut\xe2\x80"};   // "été", then a character cut short
    const std::string svg = render_matrix_svg(weights, &allowed, queries, keys, "head 1.2", RenderStyle{});
    TempDir dir;
    const std::string path = dir.file("map.svg");
    std::ofstream(path) << svg;
    const RgbaImage colours = heatmap_image(weights, &allowed, Colormap::viridis);
    const auto cell = [&](int i, int j, const std::string& what) {
        return "cell " + hex(colours.at(j, i)) + " " + shown_queries[static_cast<std::size_t>(i)] + " \u2192 " +
               (j == 2 ? std::string("cut\xef\xbf\xbd\xef\xbf\xbd") : keys[static_cast<std::size_t>(j)]) + ": " + what +
               "\n";
    };
    const std::string expected =
        cell(0, 0, "1") + cell(0, 1, "masked") + cell(0, 2, "masked") + cell(1, 0, "0.25") + cell(1, 1, "0.75") +
        cell(1, 2, "masked") +
        "query-labels <s>\nquery-labels \u00b7a\u00b7&\u00b7b\u21b5\n"
        "key-labels \"q\"\nkey-labels \xc3\xa9t\xc3\xa9\nkey-labels cut\xef\xbf\xbd\xef\xbf\xbd\n"
        "legend 1\nlegend 0\nlegend masked\n";
    CHECK(parsed(dir, path) == expected);
    CHECK(colours.at(1, 0) == masked_colour);   // x = key 1, y = query 0
}

TEST_CASE("map svg: an empty map, or one too big for an SVG, is refused in one line") {
    CHECK_THROWS_WITH_AS(render_matrix_svg(Matrix(0, 0), nullptr, {}, {}, "", RenderStyle{}),
                         "svg: nothing to draw (empty attention matrix)", Error);
    CHECK_THROWS_WITH_AS(render_matrix_svg(Matrix::Zero(513, 512), nullptr, {}, {}, "", RenderStyle{}),
                         "svg: 513 x 512 cells is more than the 262144 an SVG may hold; zoom in on a part, or "
                         "export PNG",
                         Error);
}
