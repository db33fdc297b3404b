// How much of a frame the texture pool may spend rebuilding (ui/texture_pool.h): what the
// previous frame's drawing left of the 20 ms goal, and at least 1 ms.
#include "ui/texture_pool.h"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using headscope::ui::rebuild_budget;
using Duration = std::chrono::steady_clock::duration;

TEST_CASE("the rebuild budget is what drawing leaves of a 20 ms frame") {
    // Software rendering: ~13 ms of drawing leaves 7 ms.
    CHECK(rebuild_budget(13ms) == Duration(7ms));
    // A GPU draws in a few ms.
    CHECK(rebuild_budget(4ms) == Duration(16ms));
    CHECK(rebuild_budget(2500us) == Duration(17500us));
    // The first frame (nothing drawn before it): the whole goal.
    CHECK(rebuild_budget(0ms) == Duration(20ms));
}

TEST_CASE("the rebuild budget never falls below its floor") {
    // Drawing alone at or over the goal: still one texture a frame, so stale ones catch up.
    CHECK(rebuild_budget(19500us) == Duration(1ms));
    CHECK(rebuild_budget(20ms) == Duration(1ms));
    CHECK(rebuild_budget(40ms) == Duration(1ms));
}
