#pragma once
// A heatmap's mip levels, pooled on the weights: a map drawn smaller than its size (a
// 197 x 197 head in a 60 px thumbnail) samples a smaller level instead of skipping
// cells, and each texel of a smaller level shows the strongest cell it covers, so one
// sharp weight never disappears when zoomed out. Pure CPU (no GL): tested headless.
//
// Pooling the weights, not the colours: the colour maps are not monotone in every
// channel (viridis' red falls, then rises), so a per-channel max of colours would
// invent colours no weight has.

#include "core/nn/mask.h"
#include "core/render/colormap.h"
#include "core/render/heatmap_image.h"
#include "core/tensor/matrix.h"

#include <vector>

namespace headscope::ui {

// Level 0 first, then each level half the one above, rounded DOWN and at least 1 on
// each side, down to 1 x 1: the sizes OpenGL requires of a complete mip chain (a
// chain of rounded-up sizes is incomplete, and samples as black).
using MipLevels = std::vector<RgbaImage>;

// The size of the level after one of `size` texels: max(1, size / 2).
int mip_next_size(int size);

// The source texels [first, last] one texel `i` of a level of `n_next` texels covers
// in a level of `n` texels: the texels under its area, so with an odd `n` a texel
// covers three (the middle one shared), and none is left out.
struct MipFootprint {
    int first = 0;
    int last = 0;
};
MipFootprint mip_footprint(int i, int n, int n_next);

// One level from the one above: each value the max over its footprint (both axes).
// Values are compared as floats: +inf beats everything, -inf loses to everything.
Matrix mip_max_pool(const Matrix& values);

// As heatmap_image(weights, allowed, map, scale_max) (its level 0 is that image), with
// its smaller levels: the weights are max-pooled (coolwarm, diverging: the value
// farthest from its middle 0.5 wins, so strong negatives survive too) and each level
// coloured through the colour map. A texel is drawn masked only when every cell under
// it is masked, and in the not-finite colour when any cell under it is not finite.
//
// `threads`: on the calling thread, or on every core (parallel_ranges) for a big map: the
// choice of a map's background builder (the window waits for a 1,000 x 1,000 map's levels
// after each typed character; TexturePool::get_in_background also runs it in the frame when
// the map has no texture yet, and the frame waits for it then), not of a frame's own
// textures, whose extra threads would take the cores from the worker (at idle priority).
enum class LevelThreads { calling, every_core };
MipLevels heatmap_mip_levels(const Matrix& weights, const Mask* allowed, Colormap map, float scale_max = 1.0f,
                             LevelThreads threads = LevelThreads::calling);

// Signed values placed on a diverging map's [0, 1]: 0 at 0.5, the largest finite |value|
// (or `least_bound`, if larger) at either end; values not finite are kept as they are.
Matrix centre_signed(const Matrix& values, float least_bound);

}   // namespace headscope::ui
