// The heatmap textures' mip levels (ui/widgets/heatmap_pyramid.h), on the CPU: OpenGL's level
// sizes, every cell covered, the max of each footprint, and a single strong cell
// surviving down to 1 x 1.

#include "core/render/colormap.h"
#include "core/render/heatmap_image.h"
#include "ui/widgets/heatmap_pyramid.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace headscope;
using namespace headscope::ui;

namespace {

long count_colour(const RgbaImage& image, Rgba8 colour) {
    long n = 0;
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) n += image.at(x, y) == colour;
    }
    return n;
}

}   // namespace

TEST_CASE("mip levels: sizes halve rounding down to 1 x 1, as OpenGL's complete chain") {
    CHECK(mip_next_size(1024) == 512);
    CHECK(mip_next_size(197) == 98);
    CHECK(mip_next_size(5) == 2);
    CHECK(mip_next_size(1) == 1);

    const MipLevels levels = heatmap_mip_levels(Matrix::Zero(5, 12), nullptr, Colormap::viridis);
    // Heights 5 2 1 1, widths 12 6 3 1: floor(log2(12)) + 1 = 4 levels.
    REQUIRE(levels.size() == 4);
    const int heights[] = {5, 2, 1, 1};
    const int widths[] = {12, 6, 3, 1};
    for (std::size_t k = 0; k < levels.size(); ++k) {
        CHECK(levels[k].height == heights[k]);
        CHECK(levels[k].width == widths[k]);
        CHECK(levels[k].pixels.size() == static_cast<std::size_t>(heights[k] * widths[k] * 4));
    }
}

TEST_CASE("mip levels: footprints cover every source texel, an odd size's middle texel is shared") {
    for (int n : {1, 2, 3, 5, 7, 12, 197, 1024}) {
        const int next = mip_next_size(n);
        std::vector<int> covered(static_cast<std::size_t>(n), 0);
        for (int i = 0; i < next; ++i) {
            const MipFootprint f = mip_footprint(i, n, next);
            CHECK(f.first >= 0);
            CHECK(f.last < n);
            CHECK(f.last - f.first + 1 <= (n == 1 ? 1 : 3));
            for (int s = f.first; s <= f.last; ++s) ++covered[static_cast<std::size_t>(s)];
        }
        for (int s = 0; s < n; ++s)
            CHECK_MESSAGE(covered[static_cast<std::size_t>(s)] >= 1, "n=" << n << " texel " << s);
    }
    // 5 -> 2: texel 0 spans source [0, 2.5), texel 1 [2.5, 5).
    CHECK(mip_footprint(0, 5, 2).first == 0);
    CHECK(mip_footprint(0, 5, 2).last == 2);
    CHECK(mip_footprint(1, 5, 2).first == 2);
    CHECK(mip_footprint(1, 5, 2).last == 4);
    // Even sizes: exact 2 x 2 blocks.
    CHECK(mip_footprint(3, 8, 4).first == 6);
    CHECK(mip_footprint(3, 8, 4).last == 7);
}

TEST_CASE("mip levels: each value is the max of its block") {
    // Distinct values, largest at the top-left, so a wrong block shows.
    Matrix w(5, 5);
    for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 5; ++j) w(i, j) = static_cast<float>(24 - (i * 5 + j));
    }
    const Matrix level1 = mip_max_pool(w);
    REQUIRE(level1.rows() == 2);
    REQUIRE(level1.cols() == 2);
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
            const MipFootprint r = mip_footprint(i, 5, 2);
            const MipFootprint c = mip_footprint(j, 5, 2);
            const float expected = w.block(r.first, c.first, r.last - r.first + 1, c.last - c.first + 1).maxCoeff();
            CHECK(level1(i, j) == expected);
        }
    }
    CHECK(level1(0, 0) == 24.0f);   // (0, 0)
    CHECK(level1(1, 1) == 12.0f);   // (2, 2): the shared middle
    CHECK(level1(0, 1) == 22.0f);   // (0, 2)
    const Matrix level2 = mip_max_pool(level1);
    REQUIRE(level2.size() == 1);
    CHECK(level2(0, 0) == 24.0f);
}

TEST_CASE("mip levels: one 1.0 cell among zeros keeps its colour at every level down to 1 x 1") {
    const Rgba8 strong = colormap_lookup(Colormap::viridis, 1.0f);
    const Rgba8 weak = colormap_lookup(Colormap::viridis, 0.0f);
    for (int row = 0; row < 5; ++row) {
        for (int col = 0; col < 5; ++col) {
            Matrix w = Matrix::Zero(5, 5);
            w(row, col) = 1.0f;
            const MipLevels levels = heatmap_mip_levels(w, nullptr, Colormap::viridis);
            REQUIRE(levels.size() == 3);   // 5, 2, 1
            for (std::size_t k = 0; k < levels.size(); ++k) {
                CHECK_MESSAGE(count_colour(levels[k], strong) >= 1, "cell (" << row << ", " << col << ") level " << k);
            }
            CHECK(levels.back().at(0, 0) == strong);
            CHECK(count_colour(levels[0], weak) == 24);
        }
    }
}

TEST_CASE("mip levels: level 0 is heatmap_image's picture, masked only when all masked, not finite always shows") {
    Matrix w(4, 4);
    for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) w(i, j) = 0.1f * static_cast<float>(i + j);
    }
    Mask allowed = Mask::Constant(4, 4, true);
    allowed(0, 1) = allowed(1, 0) = allowed(1, 1) = false;                   // top-left block: 3 of 4 masked
    allowed(2, 2) = allowed(2, 3) = allowed(3, 2) = allowed(3, 3) = false;   // bottom-right: all masked
    w(0, 3) = NAN;
    for (Colormap map : {Colormap::viridis, Colormap::magma, Colormap::greys, Colormap::coolwarm}) {
        const MipLevels levels = heatmap_mip_levels(w, &allowed, map, 0.8f);
        REQUIRE(levels.size() == 3);
        const RgbaImage reference = heatmap_image(w, &allowed, map, 0.8f);
        CHECK(levels[0].pixels == reference.pixels);
        // Top-left: the one allowed cell (0, 0) = 0, not the grey of the masked three.
        CHECK(levels[1].at(0, 0) == colormap_lookup(map, 0.0f));
        CHECK(levels[1].at(1, 0) == not_finite_colour);   // the NaN at (0, 3)
        CHECK(levels[1].at(1, 1) == masked_colour);
        // Bottom-left block (0.2, 0.3, 0.3, 0.4): the max; coolwarm, the farthest from its
        // middle (0.2 / 0.8 = 0.25 beats 0.4 / 0.8 = 0.5, which is no difference).
        const float winner = map == Colormap::coolwarm ? w(2, 0) : w(3, 1);
        CHECK(levels[1].at(0, 1) == heatmap_image(Matrix::Constant(1, 1, winner), nullptr, map, 0.8f).at(0, 0));
        CHECK(levels[2].at(0, 0) == not_finite_colour);
    }
}

TEST_CASE("mip levels: a diverging map keeps strong cells of either sign") {
    // coolwarm around 0.5: one strongly negative (0.0) cell among no-difference ones.
    Matrix w = Matrix::Constant(4, 4, 0.55f);
    w(3, 0) = 0.0f;
    const MipLevels levels = heatmap_mip_levels(w, nullptr, Colormap::coolwarm);
    REQUIRE(levels.size() == 3);
    CHECK(levels[2].at(0, 0) == colormap_lookup(Colormap::coolwarm, 0.0f));
    // Sequential maps take the plain max.
    CHECK(heatmap_mip_levels(w, nullptr, Colormap::viridis)[2].at(0, 0) == colormap_lookup(Colormap::viridis, 0.55f));
}

TEST_CASE("mip levels: an empty map is one empty level") {
    const MipLevels levels = heatmap_mip_levels(Matrix(0, 0), nullptr, Colormap::viridis);
    REQUIRE(levels.size() == 1);
    CHECK(levels[0].width == 0);
    CHECK(levels[0].pixels.empty());
}

TEST_CASE("centre_signed: 0 in the middle, the largest |value| at an end, rounding kept near the middle") {
    Matrix values(1, 4);
    values << 0.2f, -0.1f, 0.0f, std::nanf("");
    const Matrix placed = centre_signed(values, 1e-4f);
    CHECK(placed(0, 0) == doctest::Approx(1.0f));
    CHECK(placed(0, 1) == doctest::Approx(0.25f));
    CHECK(placed(0, 2) == 0.5f);
    CHECK(std::isnan(placed(0, 3)));
    // Differences of 1e-7 (two sums' rounding) under a floor of 1e-4: 0.0005 from the
    // middle, not spread to the ends.
    Matrix rounding(1, 2);
    rounding << 1e-7f, -1e-7f;
    const Matrix near = centre_signed(rounding, 1e-4f);
    CHECK(std::abs(near(0, 0) - 0.5f) == doctest::Approx(5e-4f));
    CHECK(std::abs(near(0, 1) - 0.5f) == doctest::Approx(5e-4f));
    // Without a floor they would reach both ends.
    const Matrix spread = centre_signed(rounding, 0.0f);
    CHECK(spread(0, 0) == doctest::Approx(1.0f));
    CHECK(spread(0, 1) == doctest::Approx(0.0f));
}
