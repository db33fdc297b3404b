// A whole attention layer on one thread against two, and run after kept keys and values.

#include "core/base/error.h"
#include "core/fast_path_support.h"
#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "core/tensor/kernels/exp_sum.h"
#include "core/tensor/kernels/weight_panels.h"
#include "core/tensor/parallel.h"
#include "core/tensor/weight_matrix.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

TEST_CASE("attention: one thread and two give the same maps and output, with and without a causal mask") {
    ThreadCount restore;
    std::mt19937 rng(5);
    const AttentionWeights w = random_attention(6, 96, 0.1f, rng);
    const Matrix x = random_matrix(150, 96, rng, 1.0f);
    for (const bool causal : {false, true}) {
        CAPTURE(causal);
        AttentionOptions options;
        if (causal) options.keep = mask_causal(150, 150);
        options.disabled_heads = {false, false, true, false, false, false};
        set_compute_threads(1);
        const AttentionTrace one = attention_forward(w, x, options);
        set_compute_threads(2);
        const AttentionTrace two = attention_forward(w, x, options);
        CHECK(max_diff(two.output, one.output.cast<double>()) < 1e-5);
        for (std::size_t h = 0; h < 6; ++h)
            CHECK(max_diff(two.heads[h].weights, one.heads[h].weights.cast<double>()) < 1e-6);
        CHECK(two.concat.middleCols(32, 16).cwiseAbs().maxCoeff() == 0.0f);   // the disabled head
    }
}

TEST_CASE("attention after kept keys and values: the later rows of the whole layer, bad kept shapes refused") {
    std::mt19937 rng(9);
    const AttentionWeights w = random_attention(4, 32, 0.2f, rng);
    const Eigen::Index T = 20;
    const Eigen::Index p = 13;
    const Matrix x = random_matrix(T, 32, rng, 1.0f);
    AttentionOptions whole_options;
    whole_options.keep = mask_causal(T, T);
    whole_options.keep_keys_values = true;
    const AttentionTrace whole = attention_forward(w, x, whole_options);
    REQUIRE(whole.keys.rows() == T);
    AttentionOptions later = whole_options;
    later.keep = Mask(whole_options.keep->bottomRows(T - p));
    // Kept from a run over the first p positions only (causal: the same keys there).
    const AttentionTrace start = attention_forward(w, x.topRows(p), AttentionOptions{mask_causal(p, p), {}, {}, true});
    const AttentionTrace got = attention_forward_after(w, x.bottomRows(T - p), start.keys, start.values, p, later);
    CHECK(max_diff(got.output, whole.output.bottomRows(T - p).cast<double>()) < 1e-5);
    CHECK(max_diff(got.keys, whole.keys.cast<double>()) < 1e-5);
    CHECK(max_diff(got.values, whole.values.cast<double>()) < 1e-5);
    for (std::size_t h = 0; h < 4; ++h) {
        CHECK(max_diff(got.heads[h].weights, whole.heads[h].weights.bottomRows(T - p).cast<double>()) < 1e-6);
    }
    const Matrix narrow = start.keys.leftCols(31);
    CHECK_THROWS_WITH_AS(attention_forward_after(w, x.bottomRows(T - p), narrow, start.values, p, later),
                         doctest::Contains("kept keys and values: expected [>= 13, 32]"), Error);
    CHECK_THROWS_WITH_AS(attention_forward_after(w, x.bottomRows(T - p), start.keys, start.values, p + 1, later),
                         doctest::Contains("kept keys and values"), Error);
    CHECK_THROWS_WITH_AS(attention_forward_after(w, x.bottomRows(T - p), start.keys, start.values, p, whole_options),
                         doctest::Contains("mask: expected shape [7, 20]"), Error);
}
