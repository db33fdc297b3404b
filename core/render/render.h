#pragma once
// Pictures of attention without a window, for `headscope-cli render` and docs: one
// head's matrix with token labels on both axes and a colour bar; a head's attention
// from one query (by default [CLS]) blended over the image; every head of every layer
// as a grid of thumbnails. Same colour maps as the GUI (core/render/colormap.h); masked cells
// in masked_colour, never drawn as weight 0.

#include "core/analysis/head_maps.h"
#include "core/image/image.h"
#include "core/models/model.h"
#include "core/render/colormap.h"
#include "core/render/heatmap_image.h"

#include <string>
#include <vector>

namespace headscope {

struct RenderStyle {
    Colormap colormap = Colormap::viridis;
    float scale_max = 1.0f;   // weight drawn as the top colour: 1 (shared 0..1) or a head's max
};

// weights [Tq, Tk]; labels [Tq] and [Tk] (non-ASCII characters print as '?').
RgbaImage render_matrix(const Matrix& weights, const Mask* allowed, const std::vector<std::string>& query_labels,
                        const std::vector<std::string>& key_labels, const std::string& title, const RenderStyle& style);

// The attention of query `query` over the patches ([grid_height x grid_width] after
// `n_prefix` leading tokens) as a heat layer over `image` (already at the model's size).
RgbaImage render_overlay(const RgbImage& image, const Matrix& weights, Eigen::Index query, int grid_width,
                         int grid_height, int n_prefix, const std::string& title, const RenderStyle& style);

// Every layer (rows) x head (columns) of `trace`, each map scaled to its own max.
// Every layer x head of a run (kept or streamed maps; `mask`: the run's).
RgbaImage render_grid(const HeadMaps& maps, const OptionalMask& mask, const std::string& title,
                      const RenderStyle& style);

// `image` with each pixel drawn as factor x factor pixels (factor >= 1): a picture for a
// high-density screen or a slide, its text and cells kept sharp-edged. Refused past the
// size any picture may have, as every picture here is.
RgbaImage enlarged(const RgbaImage& image, int factor);

}   // namespace headscope
