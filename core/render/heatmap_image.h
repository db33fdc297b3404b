#pragma once
// An attention matrix as an RGBA image, one pixel per (query, key) cell: the pixels
// the GUI uploads as a texture and the CLI writes as a PNG.

#include "core/nn/mask.h"
#include "core/render/colormap.h"
#include "core/tensor/matrix.h"

#include <cstdint>
#include <vector>

namespace headscope {

struct RgbaImage {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> pixels;   // [height, width, 4], row-major, top row first

    Rgba8 at(int x, int y) const;
};

// weights [Tq, Tk] -> image [Tq rows, Tk columns]. Cells the mask forbids are drawn in
// masked_colour, non-finite values in not_finite_colour; others are weight / scale_max
// through the colour map (scale_max > 0; 1 for the shared 0..1 scale).
RgbaImage heatmap_image(const Matrix& weights, const Mask* allowed, Colormap map, float scale_max = 1.0f);

// Row `row` of what heatmap_image draws, one float per cell into `out` (weights.cols() of
// them): weight / scale_max clamped to [0, 1], +infinity where the weight is not finite,
// -infinity where the mask forbids the cell; colormap_lookup_marked colours them. The
// window's texture levels start from these too, and pool them.
void heatmap_marked_row(const Matrix& weights, const Mask* allowed, float scale_max, Eigen::Index row, float* out);

}   // namespace headscope
