// The decoder families in an interactive session's runs: text typed at the end reuses the
// unchanged start (the rotation offset for the new positions, each layer's window applied
// to the new rows), a resumed run after a head is switched off, and a whole key/value
// group switched off; each equals the run from scratch.

#include "core/fast_path_support.h"
#include "core/models/model_registry.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/";

// Every layer's maps and the logits of two runs of the same input, within `tolerance`.
void check_same_run(const ModelTrace& got, const ModelTrace& expected, double tolerance) {
    REQUIRE(got.layers.size() == expected.layers.size());
    CHECK(max_diff(got.logits.get(), expected.logits.get().cast<double>()) < 10 * tolerance);
    for (std::size_t l = 0; l < got.layers.size(); ++l) {
        CAPTURE(l);
        const AttentionTrace& g = got.layers[l];
        const AttentionTrace& e = expected.layers[l];
        CHECK(g.window == e.window);
        for (std::size_t h = 0; h < g.heads.size(); ++h) {
            CHECK(max_diff(g.heads[h].weights, e.heads[h].weights.cast<double>()) < tolerance);
            if (e.heads[h].masked.size() == 0) continue;
            CHECK((g.heads[h].masked.array().isInf() == e.heads[h].masked.array().isInf()).all());
            // Before the rotation too (RoPE models), for the Stages view.
            REQUIRE(g.heads[h].q_unrotated.rows() == e.heads[h].q_unrotated.rows());
            REQUIRE(g.heads[h].k_unrotated.rows() == e.heads[h].k_unrotated.rows());
            if (e.heads[h].q_unrotated.size() == 0) continue;
            CHECK(max_diff(g.heads[h].q_unrotated, e.heads[h].q_unrotated.cast<double>()) < tolerance);
            CHECK(max_diff(g.heads[h].k_unrotated, e.heads[h].k_unrotated.cast<double>()) < tolerance);
        }
    }
}

const char* const decoders[] = {"llama_tiny", "llama_tiny_dynamic", "mistral_tiny", "qwen2_tiny_window",
                                "qwen3_tiny", "gemma_tiny",         "gemma2_tiny",  "gemma3_tiny",
                                "phi3_tiny",  "pythia_tiny",        "gpt2_tiny"};

std::vector<std::int64_t> ids_of(Eigen::Index n) {
    std::vector<std::int64_t> ids;
    for (Eigen::Index i = 0; i < n; ++i) ids.push_back(5 + (i * 37) % 200);
    return ids;
}

}   // namespace

TEST_CASE("decoders: typing at the end reuses the start and equals the run from scratch, windows included") {
    for (const char* name : decoders) {
        CAPTURE(name);
        const auto model = open_model(checkpoints + name, ToyConfig{});
        const std::vector<std::int64_t> ids = ids_of(20);   // past every fixture's window and LongRoPE's 8
        for (const TraceDetail detail : {TraceDetail::weights, TraceDetail::all_stages}) {
            for (const Eigen::Index p : {3, 7, 19}) {
                CAPTURE(p);
                std::vector<std::int64_t> before(ids.begin(), ids.begin() + p);
                before.push_back(1);
                RunOptions keep;
                keep.detail = detail;
                keep.keep_layer_inputs = true;
                const ModelTrace kept = model->forward(model->encode_ids(before), keep);
                const ModelInput input = model->encode_ids(ids);
                const ModelTrace expected = model->forward(input, keep);
                RunOptions reuse = keep;
                reuse.prefix_from = &kept;
                reuse.prefix_rows = p;
                check_same_run(model->forward(input, reuse), expected, 1e-5);
            }
        }
    }
}

TEST_CASE("decoders: an input typed on from another takes the positions they share from it, bit for bit") {
    for (const char* name : decoders) {
        CAPTURE(name);
        const auto model = open_model(checkpoints + name, ToyConfig{});
        const std::vector<std::int64_t> ids = ids_of(12);
        const ModelInput fresh = model->encode_ids(ids);
        for (const Eigen::Index p : {0, 5, 12}) {
            CAPTURE(p);
            std::vector<std::int64_t> earlier(ids.begin(), ids.begin() + p);
            earlier.push_back(1);   // then something else (p = 12: one token more than now)
            const ModelInput before = model->encode_ids(earlier);
            const ModelInput after = model->encode_ids_after(ids, before);
            CHECK(after.embeddings == fresh.embeddings);   // scaled (Gemma) and placed (GPT-2) alike
            CHECK(after.ids == fresh.ids);
            CHECK(after.labels == fresh.labels);
            // The shared rows are copied, not looked up again: rows marked in `before` come
            // through, and the row after them is the model's own.
            ModelInput marked = before;
            marked.embeddings.topRows(p).setConstant(42.0f);
            const ModelInput copied = model->encode_ids_after(ids, marked);
            CHECK((copied.embeddings.topRows(p).array() == 42.0f).all());
            CHECK(copied.embeddings.bottomRows(12 - p) == fresh.embeddings.bottomRows(12 - p));
        }
        // Another model's input (another width) is not read.
        ModelInput other = fresh;
        other.embeddings = Matrix::Constant(12, fresh.embeddings.cols() + 1, 42.0f);
        CHECK(model->encode_ids_after(ids, other).embeddings == fresh.embeddings);
    }
    // Text: the tokenizer's ids, then the same rule.
    const auto llama = open_model(checkpoints + "llama_tiny", ToyConfig{});
    const ModelInput short_text = llama->encode_text("the cat sat");
    ModelInput marked = short_text;
    marked.embeddings.row(0).setConstant(42.0f);
    const ModelInput longer = llama->encode_text_after("the cat sat on the mat", marked);
    const ModelInput longer_fresh = llama->encode_text("the cat sat on the mat");
    REQUIRE(longer.embeddings.rows() == longer_fresh.embeddings.rows());
    CHECK((longer.embeddings.row(0).array() == 42.0f).all());
    CHECK(longer.embeddings.bottomRows(longer.embeddings.rows() - 1) ==
          longer_fresh.embeddings.bottomRows(longer.embeddings.rows() - 1));
    CHECK(longer.spans == longer_fresh.spans);
    CHECK(llama->encode_text_after("the cat sat on the mat", short_text).embeddings == longer_fresh.embeddings);
}

TEST_CASE("decoders: a resumed run after a head is switched off equals the run from scratch") {
    for (const char* name : decoders) {
        CAPTURE(name);
        const auto model = open_model(checkpoints + name, ToyConfig{});
        const ModelInput input = model->encode_ids(ids_of(12));
        const Eigen::Index L = model->info().n_layers;
        const Eigen::Index H = model->info().n_heads;
        RunOptions keep;
        keep.keep_layer_inputs = true;
        const ModelTrace intact = model->forward(input, keep);
        RunOptions off = keep;
        off.disabled_heads = HeadMask(L, H);
        off.disabled_heads.set(off.disabled_heads.layers() - 1, 1);
        const ModelTrace expected = model->forward(input, off);
        RunOptions resumed = off;
        resumed.resume_from = &intact;
        resumed.resume_layer = L - 1;
        check_same_run(model->forward(input, resumed), expected, 1e-6);
        CHECK(max_diff(expected.logits.get(), intact.logits.get().cast<double>()) > 1e-4);   // the head mattered
    }
}

TEST_CASE("decoders: switching off a key/value group zeroes each of its query heads' context") {
    const auto model = open_model(checkpoints + "llama_tiny", ToyConfig{});   // 4 query heads, 2 key/value heads
    const ModelInfo& info = model->info();
    REQUIRE(info.n_kv_heads == 2);
    const ModelInput input = model->encode_ids(ids_of(10));
    RunOptions group;
    group.disabled_heads = {{true, true, false, false}, {false, false, false, false}};   // group 0 of layer 0
    const ModelTrace t = model->forward(input, group);
    const Eigen::Index Dh = info.head_width;
    CHECK(t.layers[0].concat.leftCols(2 * Dh).cwiseAbs().maxCoeff() == 0.0f);
    CHECK(t.layers[0].concat.rightCols(2 * Dh).cwiseAbs().maxCoeff() > 0.0f);
    const ModelTrace plain = model->forward(input, RunOptions{});
    // The maps stay (the heads still look); what reaches the stream changes.
    CHECK(t.layers[0].heads[0].weights == plain.layers[0].heads[0].weights);
    CHECK(max_diff(t.logits.get(), plain.logits.get().cast<double>()) > 1e-4);
}

TEST_CASE("decoders: the model says which layers slide and how heads share keys and values") {
    const auto gemma2 = open_model(checkpoints + "gemma2_tiny", ToyConfig{});
    CHECK(gemma2->info().layer_windows == std::vector<Eigen::Index>{4, 0, 4, 0});
    CHECK(gemma2->info().settings.at("layers") == "global (layers 1, 3); local W=4 (layers 0, 2)");
    const auto qwen = open_model(checkpoints + "qwen2_tiny_window", ToyConfig{});
    CHECK(qwen->info().layer_windows == std::vector<Eigen::Index>{0, 4, 4});
    const auto gemma = open_model(checkpoints + "gemma_tiny", ToyConfig{});
    CHECK(gemma->info().n_kv_heads == 1);
    CHECK(gemma->info().settings.at("heads") == "4 query, 1 key/value (4 per group)");
    const auto llama = open_model(checkpoints + "llama_tiny", ToyConfig{});
    CHECK(llama->info().layer_windows == std::vector<Eigen::Index>{0, 0});
    CHECK(llama->info().settings.at("rope").rfind("llama3, base 500000, factor 32", 0) == 0);
}
