// HeadMask: which heads are off, [L][H]; resized keeping what fits; equal by size and
// flags; the first layer two masks differ at (where a resumed run starts).

#include "core/base/error.h"
#include "core/nn/head_mask.h"
#include "test_support.h"

#include <doctest/doctest.h>

using namespace headscope;

TEST_CASE("HeadMask: set, toggle, count, the first layer off, a layer's flags") {
    HeadMask mask(3, 4);
    CHECK(mask.layers() == 3);
    CHECK(mask.heads() == 4);
    CHECK_FALSE(mask.any());
    CHECK(mask.first_layer() == 3);   // none off: past the last layer
    mask.set(2, 1);
    mask.set(1, 3);
    mask.toggle(0, 0);
    mask.toggle(0, 0);
    CHECK(mask.any());
    CHECK(mask.count() == 2);
    CHECK(mask.first_layer() == 1);
    CHECK(mask.off(2, 1));
    CHECK_FALSE(mask.off(0, 0));
    CHECK_FALSE(mask.off(5, 0));   // outside: on
    CHECK_FALSE(mask.off(-1, 0));
    CHECK(mask.layer_flags(1) == std::vector<bool>{false, false, false, true});
    CHECK(mask.layer_flags(3).empty());
    CHECK_THROWS_WITH_AS(mask.set(3, 0), "head 3.0: the heads are 0..2 x 0..3", Error);
    mask.enable_all();
    CHECK_FALSE(mask.any());
    CHECK(mask.layers() == 3);   // the size kept
}

TEST_CASE("HeadMask: resized to another model keeps the flags that fit, the rest on") {
    HeadMask mask(std::vector<std::vector<bool>>{{true, false, true, true, true}});
    mask.resize(2, 4);
    CHECK(mask.layer_flags(0) == std::vector<bool>{true, false, true, true});
    CHECK(mask.layer_flags(1) == std::vector<bool>(4, false));
    CHECK_THROWS_WITH_AS(HeadMask(std::vector<std::vector<bool>>{{false, false}, {false}}),
                         "disabled heads: layer 1 has 1 flags, layer 0 has 2", Error);
}

TEST_CASE("HeadMask: equal when of one size with the same heads off, and where two differ first") {
    const HeadMask none;
    HeadMask sized(4, 2);
    CHECK_FALSE(none == sized);                     // fitted to another model: another request
    CHECK(first_difference(none, sized, 4) == 4);   // but no head differs
    sized.set(2, 1);
    HeadMask other(4, 2);
    other.set(2, 1);
    CHECK(other == sized);
    HeadMask wider(4, 3);
    wider.set(2, 1);
    CHECK_FALSE(wider == sized);
    CHECK(first_difference(sized, sized, 4) == 4);
    CHECK(first_difference(none, sized, 4) == 2);
    HeadMask earlier(4, 2);
    earlier.set(1, 1);
    earlier.set(3, 0);
    CHECK(first_difference(earlier, sized, 4) == 1);
    CHECK(first_difference(HeadMask(1, 1), none, 4) == 4);   // a missing flag is "on"
}

TEST_CASE("HeadMask: a model's run takes an unsized mask or one of its shape") {
    CHECK_NOTHROW(HeadMask().check_fits(12, 12));
    CHECK_NOTHROW(HeadMask(12, 12).check_fits(12, 12));
    CHECK_THROWS_WITH_AS(HeadMask(2, 12).check_fits(12, 12),
                         "disabled heads: flags for 2 x 12 heads, the model has 12 x 12", Error);
}
