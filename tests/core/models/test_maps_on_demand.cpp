// Maps on demand (RunOptions::on_map): a run that hands each head's map over as it is made
// and keeps none gives every family's maps bit for bit as a run that keeps them, and
// Model::head_map computes any of them again, bit for bit, from what the run kept; the
// rest of the run (logits, hidden state) is the same too. Every checkpoint family's
// fixture, the demo models, with heads switched off and the causal mask flipped.

#include "core/analysis/head_summary.h"
#include "core/base/error.h"
#include "core/base/load_control.h"
#include "core/fast_path_support.h"
#include "core/models/fixture_input.h"
#include "core/models/model_registry.h"
#include "core/tensor/parallel.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/";

// Every model the registry opens, by family: the tiny checkpoints in the hub's layout and
// the demo models.
const char* const models[] = {
    "llama_tiny", "llama_tiny_dynamic", "llama_tiny_yarn", "mistral_tiny",  "qwen2_tiny", "qwen2_tiny_window",
    "qwen3_tiny", "gemma_tiny",         "gemma2_tiny",     "gemma3_tiny",   "phi3_tiny",  "pythia_tiny",
    "gpt2_tiny",  "gpt2_tiny_bf16",     "bert_tiny",       "bert_tiny_cls", "vit_tiny",   "deit_tiny_distilled",
    "t5_tiny",    "flan_t5_tiny",       "bart_tiny"};

// The streamed run of `options` against the kept one: maps, recomputed maps, logits, hidden.
void check_on_demand(const Model& model, const ModelInput& input, RunOptions options) {
    const ModelTrace kept = model.forward(input, options);
    std::map<std::pair<Eigen::Index, Eigen::Index>, Matrix> streamed;
    options.on_map = [&](Eigen::Index l, Eigen::Index h, const Matrix& weights) {
        CHECK(streamed.count({l, h}) == 0);
        streamed[{l, h}] = weights;
    };
    const ModelTrace run = model.forward(input, options);
    const ModelInfo& info = model.info();
    REQUIRE(static_cast<Eigen::Index>(streamed.size()) == info.n_layers * info.n_heads);
    CHECK(run.logits.get() == kept.logits.get());
    CHECK(run.hidden == kept.hidden);
    for (Eigen::Index l = 0; l < info.n_layers; ++l) {
        for (Eigen::Index h = 0; h < info.n_heads; ++h) {
            CAPTURE(l);
            CAPTURE(h);
            const Matrix& want = kept.layers[static_cast<std::size_t>(l)].heads[static_cast<std::size_t>(h)].weights;
            CHECK(run.layers[static_cast<std::size_t>(l)].heads[static_cast<std::size_t>(h)].weights.size() == 0);
            CHECK(streamed.at({l, h}) == want);
            CHECK(model.head_map(run, l, h) == want);
            CHECK(model.head_map(kept, l, h) == want);
        }
    }
    CHECK_THROWS_AS(model.head_map(run, info.n_layers, 0), Error);
    CHECK_THROWS_AS(model.head_map(run, 0, info.n_heads), Error);
}

}   // namespace

TEST_CASE("maps on demand: every family's streamed maps, and each computed again, equal the kept ones bit for bit") {
    ThreadCount restore;
    for (const std::string name : models) {
        CAPTURE(name);
        const auto model = open_model(checkpoints + name, ToyConfig{});
        const ModelInput input = headscope::test::fixture_input(*model);
        for (const int threads : {1, 2}) {
            CAPTURE(threads);
            set_compute_threads(threads);
            check_on_demand(*model, input, RunOptions{});
        }
        RunOptions changed;
        changed.causal = !model->info().causal;
        changed.disabled_heads = HeadMask(model->info().n_layers, model->info().n_heads);
        changed.disabled_heads.set(0, 1);
        check_on_demand(*model, input, changed);
    }
}

TEST_CASE("maps on demand: the demo models, and the stages layer keeps its maps whole") {
    ToyConfig modern;
    modern.arch = ToyArch::modern;
    // (Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.)
    for (const auto& named : {std::pair<std::string, ToyConfig>{"builtin:toy-text", ToyConfig{}},
                              std::pair<std::string, ToyConfig>{"builtin:toy-text", modern},
                              std::pair<std::string, ToyConfig>{"builtin:tiny-story", ToyConfig{}}}) {
        const std::string& name = named.first;
        CAPTURE(name);
        const auto model = open_model(name, named.second);
        const ModelInput input = model->encode_text("the cat sat on the mat and the cat slept");
        check_on_demand(*model, input, RunOptions{});
        RunOptions stages;
        stages.stages_layer = 1;
        int streamed = 0;
        stages.on_map = [&](Eigen::Index l, Eigen::Index, const Matrix&) { streamed += l == 1 ? 100 : 1; };
        const ModelTrace run = model->forward(input, stages);
        CHECK(streamed == (model->info().n_layers - 1) * model->info().n_heads);
        CHECK(run.layers[1].heads[0].weights.size() != 0);
        CHECK(run.layers[1].heads[0].scores.size() != 0);
    }
}

TEST_CASE("maps on demand: resumed from a streamed run only, no kept prefix, the last rows' logits alone") {
    const auto model = open_model(checkpoints + "llama_tiny", ToyConfig{});
    const ModelInput input = headscope::test::fixture_input(*model);
    RunOptions keep;
    keep.keep_layer_inputs = true;
    const ModelTrace kept = model->forward(input, keep);
    RunOptions streamed;
    streamed.keep_layer_inputs = true;
    streamed.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
    streamed.resume_from = &kept;
    streamed.resume_layer = 1;
    CHECK_THROWS_WITH_AS(model->forward(input, streamed), doctest::Contains("kept the maps of layer 0"), Error);
    streamed.resume_from = nullptr;
    streamed.prefix_from = &kept;
    streamed.prefix_rows = 5;
    CHECK_THROWS_WITH_AS(model->forward(input, streamed), doctest::Contains("no kept prefix"), Error);
    RunOptions last;
    last.last_logit_rows = 3;
    const ModelTrace tail = model->forward(input, last);
    CHECK(tail.logits.get() == kept.logits.get().bottomRows(3));
    // The head laid out whole for them (the rest to follow): the same numbers.
    RunOptions rest_follow = last;
    rest_follow.other_logit_rows_follow = true;
    CHECK(model->forward(input, rest_follow).logits.get() == kept.logits.get().bottomRows(3));
    // Any other row, computed from the kept final hidden state: the same numbers.
    const Eigen::Index T = kept.logits.rows();
    for (Eigen::Index row = 0; row < T; ++row) {
        CAPTURE(row);
        CHECK(model->logits_rows(tail, row, 1) == kept.logits.get().row(row));
        CHECK(model->logits_rows(kept, row, 1) == kept.logits.get().row(row));
    }
    CHECK(model->logits_rows(tail, 1, T - 2) == kept.logits.get().middleRows(1, T - 2));   // across the kept rows
    CHECK_THROWS_WITH_AS(model->logits_rows(tail, T - 1, 2), doctest::Contains("no logits for positions"), Error);
    last.last_logit_rows = 0;   // none kept (dump writes them a piece at a time)
    const ModelTrace none = model->forward(input, last);
    CHECK(none.logits.rows() == 0);
    CHECK(model->logits_rows(none, 0, T) == kept.logits.get());
    last.last_logit_rows = 1000;
    CHECK(model->forward(input, last).logits.get() == kept.logits.get());
}

TEST_CASE("maps on demand: a streamed run resumed after a head is switched off equals one run from the start") {
    const auto model = open_model(checkpoints + "qwen2_tiny", ToyConfig{});
    const ModelInput input = headscope::test::fixture_input(*model);
    const ModelInfo info = model->info();
    RunOptions first;
    first.keep_layer_inputs = true;
    first.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
    const ModelTrace before = model->forward(input, first);

    RunOptions whole = first;
    whole.disabled_heads = HeadMask(info.n_layers, info.n_heads);
    whole.disabled_heads.set(whole.disabled_heads.layers() - 1, 1);
    std::vector<Eigen::Index> handed;   // the layers whose maps the resumed run hands over
    RunOptions resumed = whole;
    resumed.resume_from = &before;
    resumed.resume_layer = info.n_layers - 1;
    resumed.on_map = [&](Eigen::Index l, Eigen::Index, const Matrix&) { handed.push_back(l); };
    const ModelTrace from_start = model->forward(input, whole);
    const ModelTrace after = model->forward(input, resumed);
    CHECK(handed == std::vector<Eigen::Index>(static_cast<std::size_t>(info.n_heads), info.n_layers - 1));
    CHECK(after.logits.get() == from_start.logits.get());
    for (Eigen::Index l = 0; l < info.n_layers; ++l) {
        for (Eigen::Index h = 0; h < info.n_heads; ++h) {
            CHECK(model->head_map(after, l, h) == model->head_map(from_start, l, h));
        }
    }
}

TEST_CASE("maps on demand: each layer is reported as it lands, and a throw from the report stops the run") {
    const auto model = open_model(checkpoints + "gemma2_tiny", ToyConfig{});
    const ModelInput input = headscope::test::fixture_input(*model);
    const Eigen::Index L = model->info().n_layers;
    std::vector<Eigen::Index> done;
    RunOptions options;
    options.on_layer = [&](Eigen::Index k, Eigen::Index n) {
        CHECK(n == L);
        done.push_back(k);
    };
    const ModelTrace run = model->forward(input, options);
    std::vector<Eigen::Index> want;
    for (Eigen::Index k = 1; k <= L; ++k) want.push_back(k);
    CHECK(done == want);
    options.on_layer = [](Eigen::Index k, Eigen::Index) {
        if (k == 1) throw LoadCancelled();
    };
    CHECK_THROWS_AS(model->forward(input, options), LoadCancelled);
}

TEST_CASE("head summary: metrics as computed on the map, and max- and mean-pooled cells over blocks") {
    Matrix map(5, 5);
    for (Eigen::Index i = 0; i < 5; ++i) {
        for (Eigen::Index j = 0; j < 5; ++j) map(i, j) = static_cast<float>(i * 5 + j) / 100.0f;
    }
    const MetricContext context;
    const HeadSummary whole = summarize_head(map, nullptr, context, 2, 3, 8);
    CHECK(whole.pooled_max == map);   // at most side x side: kept whole
    CHECK(whole.pooled_mean == map);
    CHECK(whole.metrics.layer == 2);
    CHECK(whole.metrics.head == 3);
    CHECK(whole.metrics.entropy == compute_head_metrics(map, nullptr, context).entropy);
    // Two cells per side: rows and columns {0, 1} and {2, 3, 4} (edges at c * 5 / 2).
    const HeadSummary pooled = summarize_head(map, nullptr, context, 0, 0, 2);
    REQUIRE(pooled.pooled_max.rows() == 2);
    CHECK(pooled.pooled_max(0, 0) == map(1, 1));
    CHECK(pooled.pooled_max(1, 1) == map(4, 4));
    CHECK(pooled.pooled_max(0, 1) == map(1, 4));
    CHECK(pooled.pooled_mean(0, 0) == doctest::Approx((0 + 1 + 5 + 6) / 400.0));
    CHECK(pooled.pooled_mean(1, 0) == doctest::Approx((10 + 11 + 15 + 16 + 20 + 21) / 600.0));
    CHECK_THROWS_AS(summarize_head(map, nullptr, context, 0, 0, 0), Error);
}
