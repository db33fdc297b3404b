#pragma once
// Which cell of a row of `n` cells (each `cell` px from `origin`) a screen coordinate
// falls in, clamped to 0..n-1.

#include <algorithm>
#include <cmath>

namespace headscope::ui {

// Clamped while still a float: ImGui puts a mouse it does not know (outside the window,
// no events yet) at -FLT_MAX, and converting that to int is undefined behaviour.
inline int cell_under(float position, float origin, float cell, int n) {
    const float at = (position - origin) / cell;
    if (!(at > 0.0f)) return 0;   // NaN included
    return static_cast<int>(std::min(std::floor(at), static_cast<float>(std::max(n - 1, 0))));
}

}   // namespace headscope::ui
