#include "ui/widgets/texture_pool.h"

#include <algorithm>

namespace headscope::ui {

std::chrono::steady_clock::duration rebuild_budget(std::chrono::steady_clock::duration drawing) {
    const std::chrono::steady_clock::duration left = frame_goal - drawing;
    return std::clamp<std::chrono::steady_clock::duration>(left, rebuild_floor, frame_goal);
}

}   // namespace headscope::ui
