// The engine against PyTorch: every golden case of tools/make_golden.py, every
// stage, every batch element, within an absolute 1e-5.

#include "core/models/mha/attention_io.h"
#include "core/models/mha/sequence_io.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

using namespace headscope;

namespace {

// Slice [b, h] of a [B, H, R, C] (or [b] of a [B, R, C]) tensor as an [R, C] matrix.
Matrix slice(const SafetensorsFile& file, const std::string& name, Eigen::Index b, Eigen::Index h = -1) {
    const TensorView& view = file.get(name);
    // Check the golden's shape before reading from it: a mis-shaped file fails the test.
    REQUIRE_MESSAGE(view.shape.size() == (h < 0 ? 3u : 4u), file.path() << " " << name << " has the wrong rank");
    REQUIRE(b < view.shape[0]);
    if (h >= 0) REQUIRE(h < view.shape[1]);
    const std::vector<float> all = view.to_floats();
    const Eigen::Index R = view.shape[view.shape.size() - 2];
    const Eigen::Index C = view.shape.back();
    const Eigen::Index index = h < 0 ? b : b * view.shape[1] + h;
    return ConstMatrixMap(all.data() + index * R * C, R, C);
}

}   // namespace

TEST_CASE("golden: the engine reproduces PyTorch on every case and stage" * doctest::test_suite("golden")) {
    const auto cases = test::golden_cases();
    REQUIRE(cases.size() >= 10);
    for (const auto& c : cases) {
        CAPTURE(c.name);
        const auto weights_file = SafetensorsFile::open(c.folder + "/weights.safetensors");
        const AttentionWeights weights = load_attention_weights(weights_file, c.heads).weights;
        const auto input_file = SafetensorsFile::open(c.folder + "/input.safetensors");
        const SequenceBatch x = read_sequence_batch(input_file, "x", "[B, Tq, E]");
        SequenceBatch kv = x;
        if (c.kv) {
            const auto kv_file = SafetensorsFile::open(c.folder + "/kv.safetensors");
            kv = read_sequence_batch(kv_file, "x", "[B, Tk, Ek]");
        }
        const Eigen::Index Tq = x.items[0].rows();
        const Eigen::Index Tk = kv.items[0].rows();
        std::vector<Mask> keep;
        if (c.keep) {
            const auto keep_file = SafetensorsFile::open(c.folder + "/keep.safetensors");
            keep = read_keep_masks(keep_file, x.n_batch, Tq, Tk);
        }
        const auto expected = SafetensorsFile::open(c.folder + "/expected.safetensors");

        double worst = 0.0;
        for (Eigen::Index b = 0; b < x.n_batch; ++b) {
            AttentionOptions options;
            options.detail = TraceDetail::all_stages;
            if (c.causal) options.keep = mask_causal(Tq, Tk);
            if (c.keep) options.keep = mask_and(options.keep, keep[static_cast<std::size_t>(b)]);
            options.disabled_heads.assign(static_cast<std::size_t>(c.heads), false);
            for (int h : c.disable_heads) options.disabled_heads[static_cast<std::size_t>(h)] = true;

            const AttentionTrace t = attention_forward(weights, x.items[static_cast<std::size_t>(b)],
                                                       kv.items[static_cast<std::size_t>(b)], options);
            const auto compare = [&](const std::string& stage, const Matrix& ours, const Matrix& theirs) {
                const double diff = test::max_abs_diff(ours, theirs);
                worst = std::max(worst, diff);
                CHECK_MESSAGE(diff <= test::golden_tolerance,
                              c.name << " batch " << b << " " << stage << ": max |diff| = " << diff);
            };
            for (Eigen::Index h = 0; h < c.heads; ++h) {
                const HeadTrace& head = t.heads[static_cast<std::size_t>(h)];
                compare("q", head.q, slice(expected, "q", b, h));
                compare("k", head.k, slice(expected, "k", b, h));
                compare("v", head.v, slice(expected, "v", b, h));
                compare("scores", head.scores, slice(expected, "scores", b, h));
                compare("weights", head.weights, slice(expected, "weights", b, h));
            }
            compare("context", t.concat, slice(expected, "context", b));
            compare("output", t.output, slice(expected, "output", b));
        }
        MESSAGE(c.name << ": max |engine - PyTorch| over all stages = " << worst);
    }
}

TEST_CASE("golden: each layout is recognised" * doctest::test_suite("golden")) {
    const auto layout_of = [](const std::string& name, int heads) {
        const auto file = SafetensorsFile::open(test::golden_dir() + "/" + name + "/weights.safetensors");
        return load_attention_weights(file, heads).layout;
    };
    CHECK(layout_of("torch_mha_packed_masks", 4) == AttentionLayout::torch_packed);
    CHECK(layout_of("torch_mha_kdim_cross", 4) == AttentionLayout::torch_separate_kv);
    CHECK(layout_of("seed003_inner_width", 4) == AttentionLayout::separate_projections);
}
