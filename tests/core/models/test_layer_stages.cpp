// Model::layer_stages: one layer's every stage computed again from a run that kept its
// layer inputs equals, bit for bit, what a run asking for that layer's stages holds
// there (scores before and after the mask, weights, q, k, v, contexts), with heads
// switched off and a custom mask; the window shows a hovered cell's pre-softmax score
// from it. Every checkpoint family's fixture and the demo models.

#include "core/base/error.h"
#include "core/models/fixture_input.h"
#include "core/models/model_registry.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace headscope;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/";

const char* const models[] = {"llama_tiny",  "mistral_tiny", "qwen2_tiny_window",  "gemma2_tiny",
                              "gemma3_tiny", "phi3_tiny",    "pythia_tiny",        "gpt2_tiny",
                              "bert_tiny",   "vit_tiny",     "deit_tiny_distilled"};

void check_layer_stages(const Model& model, const ModelInput& input, RunOptions options) {
    const Eigen::Index L = model.info().n_layers;
    options.keep_layer_inputs = true;
    const ModelTrace run = model.forward(input, options);
    for (Eigen::Index l = 0; l < L; ++l) {
        INFO("layer " << l);
        RunOptions staged = options;
        staged.stages_layer = l;
        const AttentionTrace expected = model.forward(input, staged).layers[static_cast<std::size_t>(l)];
        const AttentionTrace again = model.layer_stages(run, l, options.disabled_heads, -1);
        CHECK(again.input == expected.input);
        REQUIRE(again.heads.size() == expected.heads.size());
        for (std::size_t h = 0; h < again.heads.size(); ++h) {
            INFO("head " << h);
            const HeadTrace& a = again.heads[h];
            const HeadTrace& e = expected.heads[h];
            REQUIRE(e.scores.size() > 0);
            CHECK(a.scores == e.scores);
            CHECK(a.masked.cwiseEqual(e.masked).all());   // -inf where masked, on both sides
            CHECK(a.weights == e.weights);
            CHECK(a.q == e.q);
            CHECK(a.k == e.k);
            CHECK(a.v == e.v);
            CHECK(a.context == e.context);
            // One head alone (the window's hover score): the same numbers, no other head's.
            const AttentionTrace alone =
                model.layer_stages(run, l, options.disabled_heads, static_cast<Eigen::Index>(h));
            REQUIRE(alone.heads.size() == expected.heads.size());
            const HeadTrace& o = alone.heads[h];
            CHECK(o.scores == e.scores);
            CHECK(o.masked.cwiseEqual(e.masked).all());
            CHECK(o.weights == e.weights);
            CHECK(o.q == e.q);
            CHECK(o.k == e.k);
            CHECK(o.v == e.v);
            CHECK(o.context == e.context);
            for (std::size_t other = 0; other < alone.heads.size(); ++other) {
                if (other != h) CHECK(alone.heads[other].scores.size() == 0);
            }
        }
    }
}

}   // namespace

TEST_CASE("layer stages computed again from a run's kept inputs, or one head's alone, equal a run that kept them, bit "
          "for bit") {
    for (const char* name : models) {
        INFO(name);
        const auto model = open_model(checkpoints + name, ToyConfig{});
        const ModelInput input = headscope::test::fixture_input(*model);
        check_layer_stages(*model, input, RunOptions{});
        RunOptions ablated;
        ablated.disabled_heads.resize(model->info().n_layers, model->info().n_heads);
        ablated.disabled_heads.set(0, 1);
        const auto T = static_cast<Eigen::Index>(input.labels.size());
        Mask keep = Mask::Constant(T, T, true);
        keep(T - 1, 2) = false;
        ablated.keep = keep;
        check_layer_stages(*model, input, ablated);
    }
    for (const char* name : {"builtin:toy-text", "builtin:tiny-story", "builtin:toy-vit"}) {
        INFO(name);
        const auto model = open_model(name, ToyConfig{});
        check_layer_stages(*model, headscope::test::fixture_input(*model), RunOptions{});
    }
}

TEST_CASE("layer stages: a run without its layer inputs, or a layer or head the model lacks, is refused by name") {
    const auto model = open_model("builtin:toy-text", ToyConfig{});
    const ModelInput input = model->encode_text("the cat sat");
    const ModelTrace plain = model->forward(input, RunOptions{});
    CHECK_THROWS_WITH_AS(model->layer_stages(plain, 0, {}, -1),
                         "layer 0: the run kept no layer inputs, so its stages cannot be computed again", Error);
    RunOptions kept;
    kept.keep_layer_inputs = true;
    const ModelTrace run = model->forward(input, kept);
    CHECK_THROWS_WITH_AS(model->layer_stages(run, 9, {}, -1), "layer 9: the model has layers 0..1", Error);
    CHECK_THROWS_WITH_AS(model->layer_stages(run, 0, {}, 4), "head 4: the layer has heads 0..3", Error);
}
