#pragma once
// A map as SVG, for papers and slides: vector cells that stay sharp at any size, the
// token labels as real text (any script, selectable), a title and a colour legend.

#include "core/nn/mask.h"
#include "core/render/render.h"
#include "core/tensor/matrix.h"

#include <string>
#include <vector>

namespace headscope {

// weights [rows, cols]: one <rect class="cell"> per cell, in row-major order, filled as
// render_matrix fills it (masked and not-finite cells in their own colours), with a
// <title> giving query, key and weight for viewers that show one on hover; every query
// label left of its row, every key label above its column (turned to read bottom-up),
// spaces and line ends shown as the window shows them (core/render/visible_token.h);
// the legend on the right. Throws headscope::Error past max_svg_cells: a file of a
// million rectangles no viewer opens in reasonable time.
std::string render_matrix_svg(const Matrix& weights, const Mask* allowed, const std::vector<std::string>& query_labels,
                              const std::vector<std::string>& key_labels, const std::string& title,
                              const RenderStyle& style);

inline constexpr long max_svg_cells = 512L * 512L;

}   // namespace headscope
