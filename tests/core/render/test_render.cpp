#include "core/base/error.h"
#include "core/render/colormap.h"
#include "core/render/heatmap_image.h"
#include "core/render/png_export.h"
#include "test_support.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace headscope;

namespace {

void check_near(Rgba8 c, int r, int g, int b) {
    INFO("got " << int(c.r) << "," << int(c.g) << "," << int(c.b) << " expected " << r << "," << g << "," << b);
    CHECK(std::abs(int(c.r) - r) <= 1);
    CHECK(std::abs(int(c.g) - g) <= 1);
    CHECK(std::abs(int(c.b) - b) <= 1);
}

}   // namespace

TEST_CASE("colour maps match matplotlib's at the ends and the middle") {
    // matplotlib: viridis(0) = #440154, viridis(0.5) = #21918c, viridis(1) = #fde725.
    check_near(colormap_lookup(Colormap::viridis, 0.0f), 0x44, 0x01, 0x54);
    check_near(colormap_lookup(Colormap::viridis, 0.5f), 0x21, 0x91, 0x8c);
    check_near(colormap_lookup(Colormap::viridis, 1.0f), 0xfd, 0xe7, 0x25);
    // magma(0) = #000004, magma(1) = #fcfdbf.
    check_near(colormap_lookup(Colormap::magma, 0.0f), 0x00, 0x00, 0x04);
    check_near(colormap_lookup(Colormap::magma, 1.0f), 0xfc, 0xfd, 0xbf);
    // cividis(0) = #00224e, cividis(1) = #fee838; coolwarm(0) = #3b4cc0, coolwarm(1) = #b40426.
    check_near(colormap_lookup(Colormap::cividis, 0.0f), 0x00, 0x22, 0x4e);
    check_near(colormap_lookup(Colormap::cividis, 1.0f), 0xfe, 0xe8, 0x38);
    check_near(colormap_lookup(Colormap::coolwarm, 0.0f), 0x3b, 0x4c, 0xc0);
    check_near(colormap_lookup(Colormap::coolwarm, 1.0f), 0xb4, 0x04, 0x26);
    CHECK(colormap_lookup(Colormap::greys, 0.0f) == Rgba8{255, 255, 255, 255});
    CHECK(colormap_lookup(Colormap::viridis, 2.0f) == colormap_lookup(Colormap::viridis, 1.0f));   // clamped
    CHECK(colormap_lookup(Colormap::viridis, std::nanf("")) == not_finite_colour);
    CHECK(colormap_from_name("magma") == Colormap::magma);
    CHECK_FALSE(colormap_from_name("jet").has_value());
}

TEST_CASE("colour maps: the many-cell lookup gives each cell's colour, bytes round half away from zero") {
    std::vector<float> values;
    for (int k = -2000; k <= 22000; ++k) values.push_back(static_cast<float>(k) / 20000.0f);   // -0.1 .. 1.1
    for (float special : {std::nanf(""), INFINITY, -INFINITY, 0.5f, 127.5f / 255.0f, 1.0f - 1e-7f, -0.0f})
        values.push_back(special);
    // Each table entry's edge and a float either side (where the index and the shares
    // change), then values scattered over [0, 1], in an order that mixes the specials into
    // runs of eight (the lookup takes eight cells at a time).
    for (int entry = 0; entry <= 255; ++entry) {
        const float edge = static_cast<float>(entry) / 255.0f;
        values.insert(values.end(), {std::nextafter(edge, -1.0f), edge, std::nextafter(edge, 2.0f)});
    }
    std::mt19937 random(7);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (int k = 0; k < 50000; ++k) values.push_back(unit(random));
    std::shuffle(values.begin() + 24001, values.end(), random);
    for (Colormap map : {Colormap::viridis, Colormap::magma, Colormap::cividis, Colormap::greys, Colormap::coolwarm}) {
        std::vector<std::uint8_t> rgba(values.size() * 4);
        colormap_lookup_many(map, values, rgba.data());
        for (std::size_t k = 0; k < values.size(); ++k) {
            const Rgba8 one = colormap_lookup(map, values[k]);
            INFO(colormap_name(map) << " value " << values[k]);
            REQUIRE(Rgba8{rgba[4 * k], rgba[4 * k + 1], rgba[4 * k + 2], rgba[4 * k + 3]} == one);
        }
    }
    // Greys, computed here with the library's lround: (1 - t) * 255 at 127.5 and every
    // other value of the sweep rounds as lround does.
    for (float t : values) {
        if (std::isnan(t)) continue;
        const auto v =
            static_cast<std::uint8_t>(std::lround(std::clamp(1.0f - std::clamp(t, 0.0f, 1.0f), 0.0f, 1.0f) * 255.0f));
        INFO("t " << t);
        REQUIRE(colormap_lookup(Colormap::greys, t) == Rgba8{v, v, v, 255});
    }
}

TEST_CASE("colour maps: the marked lookup draws +inf as not finite and -inf as masked, the rest as the plain one") {
    // Runs of eight with a mark at each place, and a tail shorter than eight.
    std::vector<float> values;
    for (int k = 0; k < 8 * 10 + 5; ++k) values.push_back(static_cast<float>(k % 17) / 16.0f);
    for (std::size_t k = 0; k < values.size(); k += 9) values[k] = INFINITY;
    for (std::size_t k = 4; k < values.size(); k += 7) values[k] = -INFINITY;
    values[values.size() - 2] = -INFINITY;
    values[values.size() - 1] = std::nanf("");
    for (Colormap map : {Colormap::viridis, Colormap::greys, Colormap::coolwarm}) {
        std::vector<std::uint8_t> marked(values.size() * 4);
        std::vector<std::uint8_t> plain(values.size() * 4);
        colormap_lookup_marked(map, values, marked.data());
        colormap_lookup_many(map, values, plain.data());
        for (std::size_t k = 0; k < values.size(); ++k) {
            const Rgba8 got{marked[4 * k], marked[4 * k + 1], marked[4 * k + 2], marked[4 * k + 3]};
            const Rgba8 as_plain{plain[4 * k], plain[4 * k + 1], plain[4 * k + 2], plain[4 * k + 3]};
            INFO(colormap_name(map) << " cell " << k << " value " << values[k]);
            if (values[k] == INFINITY || std::isnan(values[k])) {
                CHECK(got == not_finite_colour);
            } else if (values[k] == -INFINITY) {
                CHECK(got == masked_colour);
                CHECK(as_plain == colormap_lookup(map, 0.0f));   // the plain lookup clamps it
            } else {
                CHECK(got == as_plain);
            }
        }
    }
}

TEST_CASE("heatmap image: one pixel per cell, masked and non-finite cells distinct from zero") {
    Matrix w(2, 3);
    w << 0.0f, 0.5f, 1.0f, 0.0f, std::nanf(""), 0.25f;
    Mask allowed(2, 3);
    allowed << true, true, true, false, true, true;
    const RgbaImage image = heatmap_image(w, &allowed, Colormap::viridis);
    CHECK(image.width == 3);
    CHECK(image.height == 2);
    CHECK(image.at(0, 0) == colormap_lookup(Colormap::viridis, 0.0f));
    CHECK(image.at(2, 0) == colormap_lookup(Colormap::viridis, 1.0f));
    CHECK(image.at(0, 1) == masked_colour);
    CHECK(image.at(1, 1) == not_finite_colour);
    CHECK(image.at(0, 1) != image.at(0, 0));
    // Per-head max scale: 0.25 of a max of 0.5 is the middle colour.
    CHECK(heatmap_image(w, nullptr, Colormap::viridis, 0.5f).at(2, 1) == colormap_lookup(Colormap::viridis, 0.5f));
}

TEST_CASE("PNG export round-trips through stb_image and refuses empty images") {
    test::TempDir dir;
    Matrix w(4, 5);
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = static_cast<float>(i) / 19.0f;
    const RgbaImage image = heatmap_image(w, nullptr, Colormap::magma);
    const std::string path = dir.file("map.png");
    write_png(path, image);
    int width = 0, height = 0, channels = 0;
    unsigned char* pixels = stbi_load(path.c_str(), &width, &height, &channels, 4);
    REQUIRE(pixels != nullptr);
    CHECK(width == 5);
    CHECK(height == 4);
    CHECK(std::equal(image.pixels.begin(), image.pixels.end(), pixels));
    stbi_image_free(pixels);
    CHECK_THROWS_AS(write_png(dir.file("empty.png"), RgbaImage{}), Error);
    CHECK_FALSE(std::filesystem::exists(dir.file("empty.png")));
}
