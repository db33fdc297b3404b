#pragma once
// Numbers for comparing two attention maps of the same shape (two heads, or one head
// with and without a mask): how far apart they are, cell by cell and as distributions.

#include "core/matrix.h"

namespace headscope {

struct HeadComparison {
    double max_abs_difference = 0.0;   // max over cells of |a - b|
    double mean_js_divergence = 0.0;   // Jensen-Shannon divergence per query row, in bits (0..1), averaged
    int rows_compared = 0;             // rows where either map has any weight
};

// a, b: [Tq, Tk] rows of attention weights (each row sums to 1, or is all 0 where
// fully masked; such rows in both maps are skipped). Throws on a shape mismatch.
HeadComparison compare_heads(const Matrix& a, const Matrix& b);

} // namespace headscope
