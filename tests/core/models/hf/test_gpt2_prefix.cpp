// GPT-2 with text typed at its end: the unchanged start is reused, equal to a run from scratch.

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

TEST_CASE("GPT-2: typing at the end reuses the unchanged start, and equals the run from scratch at every stage") {
    const std::string folder = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/gpt2_tiny";
    const auto model = open_model(folder, ToyConfig{});
    const std::vector<std::int64_t> ids = {17, 3, 250, 41, 99, 5, 17, 3, 250, 8, 12, 64};
    for (const TraceDetail detail : {TraceDetail::weights, TraceDetail::all_stages}) {
        for (const Eigen::Index p : {1, 5, 11}) {   // kept positions: the text before the edit
            CAPTURE(p);
            CAPTURE(detail == TraceDetail::all_stages);
            // The earlier run: the first p tokens, then something else after them.
            std::vector<std::int64_t> before(ids.begin(), ids.begin() + p);
            before.push_back(200);
            RunOptions keep;
            keep.detail = detail;
            keep.keep_layer_inputs = true;
            keep.disabled_heads = {{false, true}, {false, false}};
            const ModelTrace kept = model->forward(model->encode_ids(before), keep);
            RunOptions scratch = keep;
            const ModelInput input = model->encode_ids(ids);
            const ModelTrace expected = model->forward(input, scratch);
            RunOptions reuse = keep;
            reuse.prefix_from = &kept;
            reuse.prefix_rows = p;
            const ModelTrace got = model->forward(input, reuse);
            CHECK(max_diff(got.logits.get(), expected.logits.get().cast<double>()) < 1e-4);
            CHECK(max_diff(got.hidden, expected.hidden.cast<double>()) < 1e-5);
            REQUIRE(got.layer_inputs.size() == 2);
            for (std::size_t l = 0; l < 2; ++l) {
                CHECK(max_diff(got.layer_inputs[l].get(), expected.layer_inputs[l].get().cast<double>()) < 1e-5);
                const AttentionTrace& g = got.layers[l];
                const AttentionTrace& e = expected.layers[l];
                CHECK(max_diff(g.output, e.output.cast<double>()) < 1e-5);
                CHECK(max_diff(g.concat, e.concat.cast<double>()) < 1e-5);
                // Every position's keys and values, for the next text typed after this one.
                REQUIRE(g.keys.rows() == static_cast<Eigen::Index>(ids.size()));
                CHECK(max_diff(g.keys, e.keys.cast<double>()) < 1e-5);
                CHECK(max_diff(g.values, e.values.cast<double>()) < 1e-5);
                for (std::size_t h = 0; h < 2; ++h) {
                    CHECK(max_diff(g.heads[h].weights, e.heads[h].weights.cast<double>()) < 1e-6);
                    if (detail != TraceDetail::all_stages) continue;
                    for (const auto& [a, b] : {std::pair{&g.heads[h].q, &e.heads[h].q},
                                               {&g.heads[h].k, &e.heads[h].k},
                                               {&g.heads[h].v, &e.heads[h].v},
                                               {&g.heads[h].scores, &e.heads[h].scores},
                                               {&g.heads[h].context, &e.heads[h].context}}) {
                        CHECK(max_diff(*a, b->cast<double>()) < 1e-5);
                    }
                    // -inf where masked, the same scores elsewhere.
                    CHECK((g.heads[h].masked.array().isInf() == e.heads[h].masked.array().isInf()).all());
                }
                if (detail == TraceDetail::all_stages) CHECK(max_diff(g.input, e.input.cast<double>()) < 1e-5);
            }
        }
    }
}

TEST_CASE("GPT-2: a prefix that cannot be reused is refused in one line") {
    const std::string folder = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/gpt2_tiny";
    const auto model = open_model(folder, ToyConfig{});
    const ModelInput input = model->encode_ids(std::vector<std::int64_t>{1, 2, 3, 4});
    RunOptions keep;
    keep.keep_layer_inputs = true;
    const ModelTrace kept = model->forward(input, keep);
    const ModelTrace no_inputs = model->forward(input, RunOptions{});
    RunOptions reuse;
    reuse.prefix_from = &kept;
    reuse.prefix_rows = 4;   // nothing left to compute
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("expected 1..3"), Error);
    reuse.prefix_rows = 2;
    reuse.causal = false;   // every position would see the changed ones
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("without a causal mask"), Error);
    reuse.causal.reset();
    reuse.detail = TraceDetail::all_stages;
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("another detail"), Error);
    reuse.detail = TraceDetail::weights;
    reuse.prefix_from = &no_inputs;
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("did not keep every layer's keys and values"),
                         Error);
    // Keys and values, but not the layer inputs a run that keeps its own needs.
    ModelTrace no_layer_inputs = kept;
    no_layer_inputs.layer_inputs.clear();
    reuse.prefix_from = &no_layer_inputs;
    CHECK_NOTHROW(model->forward(input, reuse));
    reuse.keep_layer_inputs = true;
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("did not keep every layer's input"), Error);
    reuse.keep_layer_inputs = false;
    reuse.prefix_from = &kept;
    Mask keep_mask = Mask::Constant(4, 4, true);
    keep_mask(1, 0) = false;   // a different mask over the kept rows
    reuse.keep = keep_mask;
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("another attention mask"), Error);
    // A custom mask of another size, with no causal one to meet it first.
    reuse.causal = false;
    reuse.keep = Mask::Constant(3, 3, true);
    CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("expected [4, 4]"), Error);
    reuse.causal.reset();
    reuse.keep.reset();
    // A kept run with the logits of its last row only (or none): its row 0 is position 3's.
    for (const Eigen::Index kept_rows : {Eigen::Index{1}, Eigen::Index{0}}) {
        RunOptions last_rows = keep;
        last_rows.last_logit_rows = kept_rows;
        const ModelTrace few_logits = model->forward(input, last_rows);
        reuse.prefix_from = &few_logits;
        reuse.prefix_rows = 1;
        CHECK_THROWS_WITH_AS(model->forward(input, reuse), doctest::Contains("asks for every row"), Error);
        RunOptions last_only = reuse;   // a run that wants its own last row only takes them
        last_only.last_logit_rows = 1;
        CHECK(model->forward(input, last_only).logits.get().isApprox(kept.logits.get().bottomRows(1), 1e-5f));
    }
}
