// High-norm tokens: outliers among the patch rows' output norms, on hand-made norms.

#include "core/analysis/high_norm_tokens.h"
#include "core/base/error.h"

#include <doctest/doctest.h>

using namespace headscope;

namespace {

Vector norms_of(std::initializer_list<float> values) {
    Vector v(static_cast<Eigen::Index>(values.size()));
    Eigen::Index i = 0;
    for (const float x : values) v(i++) = x;
    return v;
}

}   // namespace

TEST_CASE("high_norm_tokens: patches past twice the patches' median, the prefix not judged") {
    // [CLS] (100, not a patch), then five patches: median 3, so past 6 only the 50.
    const HighNormTokens odd = high_norm_tokens(norms_of({100.0f, 1.0f, 2.0f, 3.0f, 4.0f, 50.0f}), 1);
    CHECK(odd.median == 3.0f);
    CHECK(odd.tokens == std::vector<int>{5});
    // Four patches from row 2 (2, 3, 5, 10): the median is the mean of the middle two, 4; past 8: the 10.
    const HighNormTokens even = high_norm_tokens(norms_of({9.0f, 1.0f, 2.0f, 3.0f, 5.0f, 10.0f}), 2);
    CHECK(even.median == 4.0f);
    CHECK(even.tokens == std::vector<int>{5});
    // Four patches from row 1 (1, 2, 3, 10): median 2.5; past 5: the 10 (row 4).
    const HighNormTokens four = high_norm_tokens(norms_of({9.0f, 1.0f, 2.0f, 3.0f, 10.0f}), 1);
    CHECK(four.median == 2.5f);
    CHECK(four.tokens == std::vector<int>{4});
    // Another factor; none past it.
    CHECK(high_norm_tokens(norms_of({1.0f, 2.0f, 3.0f}), 0, 1.2f).tokens == std::vector<int>{2});
    CHECK(high_norm_tokens(norms_of({1.0f, 1.0f, 1.0f}), 0).tokens.empty());
}

TEST_CASE("high_norm_tokens: no norms or no patches find nothing, a first patch past the rows is refused") {
    CHECK(high_norm_tokens(Vector(), 1).tokens.empty());
    CHECK(high_norm_tokens(norms_of({5.0f}), 1).tokens.empty());
    CHECK_THROWS_AS(high_norm_tokens(norms_of({5.0f}), 2), Error);
    CHECK_THROWS_AS(high_norm_tokens(norms_of({5.0f}), -1), Error);
}
