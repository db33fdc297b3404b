// How much of a frame the texture pool may spend rebuilding (ui/texture_pool.h): what the
// previous frame's drawing left of the 25 ms goal, within [1 ms, 20 ms].
#include "ui/texture_pool.h"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using headscope::ui::rebuild_budget;

TEST_CASE("the rebuild budget is what drawing leaves of a 25 ms frame") {
    // Software rendering: ~17 ms of drawing leaves 8 ms.
    CHECK(rebuild_budget(17ms) == std::chrono::steady_clock::duration(8ms));
    CHECK(rebuild_budget(10ms) == std::chrono::steady_clock::duration(15ms));
}

TEST_CASE("the rebuild budget stays within its floor and ceiling") {
    // A GPU draws in a few ms: the ceiling, as the fixed budget was.
    CHECK(rebuild_budget(4ms) == std::chrono::steady_clock::duration(20ms));
    CHECK(rebuild_budget(0ms) == std::chrono::steady_clock::duration(20ms));
    // Drawing alone over the goal: still at least one texture a frame, so stale ones catch up.
    CHECK(rebuild_budget(24500us) == std::chrono::steady_clock::duration(1ms));
    CHECK(rebuild_budget(40ms) == std::chrono::steady_clock::duration(1ms));
}
