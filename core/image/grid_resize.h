#pragma once
// Resizing a grid of feature vectors, as torch.nn.functional.interpolate(x,
// size=(out_h, out_w), mode="bicubic", align_corners=False) does on the CPU: what
// transformers' interpolate_pos_encoding (and DINO) use to fit a ViT's learned
// position embeddings to a patch grid of another size.
//
// Keys' cubic convolution with A = -0.75, separable. Output column x samples source
// position (x + 0.5) * in_w / out_w - 0.5; its four taps floor(s) - 1 .. floor(s) + 2
// are clamped to the edge (PyTorch 1.13, Debian's: the fraction is taken from the
// unclamped floor, so a source position left of 0 still blends the first two columns).

#include "core/tensor/matrix.h"

namespace headscope {

// `grid`: [in_h * in_w, C], row y * in_w + x holding cell (y, x)'s C features.
// Returns [out_h * out_w, C] in the same order. Sizes must be at least 1.
Matrix resize_grid_bicubic(const ConstMatrixRef& grid, int in_h, int in_w, int out_h, int out_w);

// As interpolate(..., mode="bicubic", align_corners=False, antialias=True) on the CPU (what
// DINOv2 with registers uses): Pillow's filter, Keys' cubic with A = -0.5, widened by the
// scale when shrinking (support 2 * max(scale, 1)), over the source cells whose centres
// fall in it, weights normalised to sum 1 over that window (no edge replicated). Separable:
// the width first, then the height, each pass only where its size changes.
Matrix resize_grid_bicubic_antialiased(const ConstMatrixRef& grid, int in_h, int in_w, int out_h, int out_w);

}   // namespace headscope
