// builtin:toy-text --arch modern (Llama's block: RMSNorm, SwiGLU, rotary positions, 2
// query heads per key/value head) in process, against the maps tools/demo_reference.py
// computed in PyTorch from modeling_llama.py: a full run, a run that reuses a kept
// prefix while text is typed at the end, and a run that resumes at a layer.

#include "core/models/toy/toy_models.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

// What tools/demo_reference.py's case "toy_text_modern" runs.
ToyConfig golden_config() {
    ToyConfig c;
    c.arch = ToyArch::modern;
    c.width = 64;
    c.n_heads = 4;
    c.n_layers = 3;
    c.seed = 5;
    c.max_tokens = 64;
    return c;
}

// Its sentence (tests/golden/models/cases.json).
const char* const golden_text = "The little red hen found a grain of wheat . The little red hen";

struct Golden {
    std::vector<std::int64_t> ids;          // the sentence's token ids
    std::vector<std::vector<float>> maps;   // [L] x [H, T, T]
};

Golden read_golden() {
    const auto file = SafetensorsFile::open(golden_dir() + "/models/toy_text_modern/expected.safetensors");
    Golden g;
    g.ids = make_toy_text(golden_config())->encode_text(golden_text).ids;
    REQUIRE(static_cast<std::int64_t>(g.ids.size()) == file.get("input_ids").shape.at(0));
    for (int l = 0; l < golden_config().n_layers; ++l)
        g.maps.push_back(file.get("attn." + std::to_string(l)).to_floats());
    return g;
}

// The largest |difference| between every head's map and the golden's.
double max_map_difference(const ModelTrace& trace, const Golden& g) {
    double worst = 0.0;
    REQUIRE(trace.layers.size() == g.maps.size());
    for (std::size_t l = 0; l < g.maps.size(); ++l) {
        std::size_t at = 0;
        for (const HeadTrace& head : trace.layers[l].heads) {
            const auto n = static_cast<std::size_t>(head.weights.size());
            REQUIRE(at + n <= g.maps[l].size());
            worst = std::max(worst, max_abs_diff(head.weights.data(), g.maps[l].data() + at, n));
            at += n;
        }
        CHECK(at == g.maps[l].size());
    }
    return worst;
}

}   // namespace

TEST_CASE("toy-text modern: every map equals PyTorch's Llama block") {
    const Golden g = read_golden();
    const auto model = make_toy_text(golden_config());
    CHECK(model->info().causal);
    const ModelInput input = model->encode_ids(g.ids);
    const ModelTrace trace = model->forward(input, RunOptions{});
    CHECK(max_map_difference(trace, g) <= 1e-4);
}

TEST_CASE("toy-text modern: typing at the end reuses the kept prefix, maps still equal PyTorch's") {
    const Golden g = read_golden();
    const auto model = make_toy_text(golden_config());
    const auto T = static_cast<Eigen::Index>(g.ids.size());
    for (const Eigen::Index p : {Eigen::Index{1}, T / 2, T - 1}) {
        CAPTURE(p);
        RunOptions keep;
        keep.keep_layer_inputs = true;
        keep.stages_layer = 1;   // one layer's stages too: their kept rows are joined with the new ones
        const std::vector<std::int64_t> start(g.ids.begin(), g.ids.begin() + p);
        const ModelTrace kept = model->forward(model->encode_ids(start), keep);

        RunOptions reuse = keep;
        reuse.prefix_from = &kept;
        reuse.prefix_rows = p;
        const ModelTrace joined = model->forward(model->encode_ids(g.ids), reuse);
        CHECK(max_map_difference(joined, g) <= 1e-4);

        // The joined stages equal a full run's (rotated q and k of the grouped heads included).
        const ModelTrace full = model->forward(model->encode_ids(g.ids), keep);
        for (std::size_t h = 0; h < full.layers[1].heads.size(); ++h) {
            CAPTURE(h);
            CHECK(max_abs_diff(joined.layers[1].heads[h].scores, full.layers[1].heads[h].scores) <= 1e-4);
            CHECK(max_abs_diff(joined.layers[1].heads[h].k, full.layers[1].heads[h].k) <= 1e-5);
        }
        CHECK(max_abs_diff(joined.hidden, full.hidden) <= 1e-4);
    }
}

TEST_CASE("toy-text modern: resuming at a layer equals a full run with the same heads off") {
    const Golden g = read_golden();
    const auto model = make_toy_text(golden_config());
    const ModelInput input = model->encode_ids(g.ids);
    RunOptions keep;
    keep.keep_layer_inputs = true;
    const ModelTrace before = model->forward(input, keep);

    RunOptions ablate = keep;
    ablate.disabled_heads = {{false, false, false, false}, {false, false, false, false}, {false, true, false, false}};
    const ModelTrace full = model->forward(input, ablate);
    ablate.resume_from = &before;
    ablate.resume_layer = 2;
    const ModelTrace resumed = model->forward(input, ablate);
    for (std::size_t l = 0; l < full.layers.size(); ++l) {
        for (std::size_t h = 0; h < full.layers[l].heads.size(); ++h) {
            CHECK(max_abs_diff(resumed.layers[l].heads[h].weights, full.layers[l].heads[h].weights) == 0.0);
        }
    }
    // Head 2.1 off changes layer 2's output, not its maps: the hidden state moves.
    CHECK(max_abs_diff(full.hidden, before.hidden) > 1e-6);
    CHECK(max_abs_diff(resumed.hidden, full.hidden) == 0.0);
}

TEST_CASE("toy-text modern: an odd number of heads cannot be grouped in pairs") {
    ToyConfig c = golden_config();
    c.n_heads = 3;
    c.width = 48;
    CHECK_THROWS_WITH(make_toy_text(c), doctest::Contains("must be even"));
}
