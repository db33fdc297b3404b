#include "core/analysis/head_compare.h"
#include "core/base/error.h"
#include "core/models/mha/attention_io.h"
#include "core/nn/attention.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace headscope;
using headscope::test::random_matrix;

namespace {

Linear random_linear(Eigen::Index out, Eigen::Index in, std::mt19937& rng, bool bias = true) {
    Linear l;
    l.weight = random_matrix(out, in, rng, 1.0f / std::sqrt(static_cast<float>(in)));
    if (bias) l.bias = random_matrix(out, 1, rng, 0.2f);
    return l;
}

AttentionWeights random_attention(Eigen::Index E, Eigen::Index D, Eigen::Index H, Eigen::Index Ek, std::mt19937& rng) {
    AttentionWeights w;
    w.n_heads = H;
    w.q = random_linear(D, E, rng);
    w.k = random_linear(D, Ek, rng);
    w.v = random_linear(D, Ek, rng);
    w.out = random_linear(E, D, rng);
    return w;
}

Mask random_mask(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng, double p_allowed) {
    std::bernoulli_distribution allowed(p_allowed);
    Mask m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = allowed(rng);
    return m;
}

}   // namespace

TEST_CASE("one head, identity projections: weights and output by hand") {
    // E = D = 2, H = 1, Dh = 2; Q = K = V = X, out = identity.
    AttentionWeights w;
    w.n_heads = 1;
    w.q.weight = w.k.weight = w.v.weight = w.out.weight = Matrix::Identity(2, 2);
    Matrix x(2, 2);
    x << 1, 0, 0, 1;
    const AttentionTrace t = attention_forward(w, x);
    // scores = X X^T / sqrt(2) = diag(1/sqrt 2); row softmax of [1/sqrt2, 0].
    const float a = std::exp(1.0f / std::sqrt(2.0f)) / (std::exp(1.0f / std::sqrt(2.0f)) + 1.0f);
    Matrix expected(2, 2);
    expected << a, 1 - a, 1 - a, a;
    CHECK(test::max_abs_diff(t.heads[0].weights, expected) < 1e-7);
    CHECK(test::max_abs_diff(t.output, expected) < 1e-7);   // weights * V with V = I
}

TEST_CASE("masks: causal and keep, composed by AND, hand-checked weights") {
    AttentionWeights w;
    w.n_heads = 1;
    w.q.weight = Matrix::Zero(1, 1);   // all scores 0: weights are uniform over allowed keys
    w.k.weight = Matrix::Zero(1, 1);
    w.v.weight = Matrix::Identity(1, 1);
    w.out.weight = Matrix::Identity(1, 1);
    w.out.bias = Vector::Constant(1, 0.5f);
    Matrix x(3, 1);
    x << 1, 2, 3;

    Mask keep(3, 3);
    keep << true, true, true, false, true, true, false, false, true;   // with causal: row 0 {0}, row 1 {1}, row 2 {2}
    AttentionOptions options;
    options.keep = mask_and(mask_causal(3, 3), keep);
    const AttentionTrace t = attention_forward(w, x, options);
    CHECK(t.heads[0].weights.isIdentity());
    CHECK(std::abs(t.output(2, 0) - 3.5f) < 1e-6f);   // value 3 + bias 0.5

    options.keep = mask_causal(3, 3);
    const AttentionTrace causal = attention_forward(w, x, options);
    CHECK(causal.heads[0].weights(1, 0) == 0.5f);
    CHECK(std::abs(causal.heads[0].weights(2, 1) - 1.0f / 3.0f) < 1e-7f);
    CHECK(causal.heads[0].weights(0, 2) == 0.0f);
    CHECK(std::abs(causal.output(1, 0) - (1.5f + 0.5f)) < 1e-6f);   // mean of 1, 2 plus bias
}

TEST_CASE("causal mask matches torch.tril(ones(Tq, Tk)) for Tq != Tk") {
    const Mask m = mask_causal(2, 4);
    CHECK(m(0, 0));
    CHECK_FALSE(m(0, 1));
    CHECK(m(1, 1));
    CHECK_FALSE(m(1, 2));
    CHECK(mask_causal(4, 2).row(3).all());
}

TEST_CASE("invariants on random layers: rows sum to 1, masked weights exactly 0, empty rows 0 and finite") {
    std::mt19937 rng(20261122);
    for (int trial = 0; trial < 20; ++trial) {
        const Eigen::Index H = 1 + trial % 4, Dh = 1 + trial % 5, E = 3 + trial % 7;
        const Eigen::Index Tq = 1 + trial % 9, Tk = 1 + (trial * 7) % 11, Ek = 2 + trial % 3;
        const AttentionWeights w = random_attention(E, H * Dh, H, Ek, rng);
        const Matrix xq = random_matrix(Tq, E, rng, 3.0f);
        const Matrix xkv = random_matrix(Tk, Ek, rng, 3.0f);
        AttentionOptions options;
        options.keep = random_mask(Tq, Tk, rng, 0.5);
        if (Tq > 1) options.keep->row(Tq / 2).setConstant(false);   // always one fully masked row
        options.detail = TraceDetail::all_stages;
        const AttentionTrace t = attention_forward(w, xq, xkv, options);
        const Mask& keep = *options.keep;

        REQUIRE(t.heads.size() == static_cast<std::size_t>(H));
        for (const HeadTrace& head : t.heads) {
            CHECK(head.weights.allFinite());
            for (Eigen::Index i = 0; i < Tq; ++i) {
                if (keep.row(i).any()) {
                    CHECK(std::abs(head.weights.row(i).sum() - 1.0f) < 1e-6f);
                } else {
                    CHECK(head.weights.row(i).isZero(0.0f));
                    CHECK(head.context.row(i).isZero(0.0f));
                }
                for (Eigen::Index j = 0; j < Tk; ++j) {
                    if (!keep(i, j)) {
                        CHECK(head.weights(i, j) == 0.0f);
                        CHECK(head.masked(i, j) == -std::numeric_limits<float>::infinity());
                    } else {
                        CHECK(head.weights(i, j) >= 0.0f);
                        CHECK(head.masked(i, j) == head.scores(i, j));
                    }
                }
            }
        }
        CHECK(t.output.allFinite());
        // A query with no allowed key outputs just the output bias.
        if (Tq > 1) CHECK(test::max_abs_diff(t.output.row(Tq / 2), w.out.bias.transpose()) < 1e-6);
    }
}

TEST_CASE("the fast path gives the same weights and output as the full trace") {
    std::mt19937 rng(7);
    const AttentionWeights w = random_attention(12, 12, 3, 12, rng);
    const Matrix x = random_matrix(6, 12, rng);
    AttentionOptions options;
    options.keep = mask_causal(6, 6);
    const AttentionTrace fast = attention_forward(w, x, options);
    options.detail = TraceDetail::all_stages;
    const AttentionTrace full = attention_forward(w, x, options);
    CHECK(fast.heads[0].q.size() == 0);   // stages are computed only on request
    for (std::size_t h = 0; h < 3; ++h) CHECK(fast.heads[h].weights == full.heads[h].weights);
    CHECK(fast.output == full.output);
    // The stages are what they say: q = x Wq^T + bq restricted to the head's columns.
    const Matrix q = linear_forward(w.q, x);
    CHECK(test::max_abs_diff(full.heads[1].q, q.middleCols(4, 4)) == 0.0);
    CHECK(test::max_abs_diff(full.concat.middleCols(8, 4), full.heads[2].context) == 0.0);
}

TEST_CASE("ablated heads: zero context, others unchanged, weights still reported") {
    std::mt19937 rng(99);
    const AttentionWeights w = random_attention(16, 16, 4, 16, rng);
    const Matrix x = random_matrix(5, 16, rng);
    AttentionOptions options;
    options.detail = TraceDetail::all_stages;
    const AttentionTrace base = attention_forward(w, x, options);
    options.disabled_heads = {false, true, false, true};
    const AttentionTrace ablated = attention_forward(w, x, options);
    for (std::size_t h = 0; h < 4; ++h) {
        CHECK(ablated.heads[h].weights == base.heads[h].weights);
        const auto cols = ablated.concat.middleCols(static_cast<Eigen::Index>(h) * 4, 4);
        if (options.disabled_heads[h]) {
            CHECK(cols.isZero(0.0f));
        } else {
            CHECK(Matrix(cols) == Matrix(base.concat.middleCols(static_cast<Eigen::Index>(h) * 4, 4)));
        }
    }
    // Disabling every head leaves only the output bias.
    options.disabled_heads.assign(4, true);
    const AttentionTrace none = attention_forward(w, x, options);
    for (Eigen::Index i = 0; i < 5; ++i) CHECK(test::max_abs_diff(none.output.row(i), w.out.bias.transpose()) == 0.0);
}

TEST_CASE("softmax is stable for huge scores and exact at the edges") {
    Matrix s(3, 3);
    s << 1000.0f, 1000.0f, -1000.0f, -3e38f, -3e38f, -3e38f, 88.0f, -88.0f, 0.0f;
    softmax_rows(s, nullptr);
    CHECK(s.allFinite());
    CHECK(s(0, 0) == 0.5f);
    CHECK(s(0, 2) == 0.0f);
    CHECK(std::abs(s.row(1).sum() - 1.0f) < 1e-6f);
    CHECK(std::abs(s.row(2).sum() - 1.0f) < 1e-6f);
}

TEST_CASE("softmax: a NaN score (NaN weights) leaves the masked cells exactly 0, so the view still shows the mask") {
    Matrix s(2, 3);
    s << std::nanf(""), 1.0f, 2.0f, 0.5f, std::nanf(""), 3.0f;
    Mask causal(2, 3);   // key j allowed for query i iff j <= i
    causal << true, false, false, true, true, false;
    softmax_rows(s, &causal);
    CHECK(std::isnan(s(0, 0)));   // the allowed cell reached by the NaN
    CHECK(s(0, 1) == 0.0f);
    CHECK(s(0, 2) == 0.0f);
    CHECK(std::isnan(s(1, 0)));
    CHECK(std::isnan(s(1, 1)));
    CHECK(s(1, 2) == 0.0f);
}

TEST_CASE(
    "softmax: a NaN among many allowed keys, or beside only -inf, makes the allowed cells NaN and the masked ones 0") {
    const float nan = std::nanf("");
    const float inf = std::numeric_limits<float>::infinity();
    const Eigen::Index n = 40;
    Matrix s = Matrix::Constant(4, n, 1.0f);
    Mask keep = Mask::Constant(4, n, true);
    s(0, 25) = nan;               // row 0: a run of 40 keys, one NaN
    s.row(1).setConstant(-inf);   // row 1: a run of 35 keys, -inf and one NaN
    s(1, 3) = nan;
    keep.block(1, 35, 1, 5).setConstant(false);
    s.row(2).setConstant(-inf);   // row 2: the same with a gap
    s(2, 3) = nan;
    keep(2, 10) = false;
    keep(3, 0) = false;   // row 3: a gap, no NaN: a real softmax
    keep(3, 20) = false;
    softmax_rows(s, &keep);
    for (Eigen::Index i = 0; i < 3; ++i) {
        CAPTURE(i);
        for (Eigen::Index j = 0; j < n; ++j) {
            if (keep(i, j)) {
                CHECK(std::isnan(s(i, j)));
            } else {
                CHECK(s(i, j) == 0.0f);
            }
        }
    }
    CHECK(s(3, 0) == 0.0f);
    CHECK(s(3, 20) == 0.0f);
    CHECK(std::abs(s.row(3).sum() - 1.0f) < 1e-6f);
    CHECK(std::abs(s(3, 1) - 1.0f / 38.0f) < 1e-7f);
    Matrix wrong(3, n);
    CHECK_THROWS_WITH_AS(softmax_rows(wrong, &keep), "mask: expected shape [3, 40] (the scores'), got [4, 40]", Error);
}

TEST_CASE("shape errors are headscope::Error with both shapes named") {
    std::mt19937 rng(1);
    AttentionWeights w = random_attention(8, 8, 2, 8, rng);
    const Matrix x = random_matrix(4, 8, rng);
    CHECK_THROWS_WITH_AS(attention_forward(w, random_matrix(4, 7, rng)), doctest::Contains("E = 8, got 7"), Error);
    AttentionOptions options;
    options.keep = mask_causal(4, 5);
    CHECK_THROWS_WITH_AS(attention_forward(w, x, options), doctest::Contains("[4, 4]"), Error);
    options.keep.reset();
    options.disabled_heads = {true};
    CHECK_THROWS_AS(attention_forward(w, x, options), Error);
    w.n_heads = 3;
    CHECK_THROWS_WITH_AS(attention_forward(w, x), doctest::Contains("not divisible by 3"), Error);
    w.n_heads = 2;
    w.out.bias = Vector::Zero(5);
    CHECK_THROWS_WITH_AS(attention_forward(w, x), doctest::Contains("out_proj.bias"), Error);
    w.out.bias.resize(0);
    CHECK_THROWS_AS(attention_forward(w, Matrix(0, 8)), Error);
}

TEST_CASE("masks compared and searched a row at a time: corners of different sizes, one cell apart") {
    const Mask small = mask_causal(3, 3);
    Mask big = mask_causal(5, 6);
    CHECK(masks_agree(small, big, 3, 3));   // a causal mask's corner is the smaller causal mask
    CHECK(masks_agree(big, small, 2, 3));
    big(2, 1) = false;
    CHECK_FALSE(masks_agree(small, big, 3, 3));
    CHECK(masks_agree(small, big, 2, 3));   // the changed cell outside the rows compared
    CHECK(masks_agree(small, big, 3, 1));   // ... or outside the columns
    // Above the diagonal a causal mask allows nothing; one cell allowed there is found.
    CHECK_FALSE(mask_allows_any(big, 0, 4, 4, 2));
    CHECK_FALSE(mask_allows_any(big, 1, 2, 3, 3));
    big(3, 5) = true;
    CHECK(mask_allows_any(big, 0, 4, 4, 2));
    CHECK_FALSE(mask_allows_any(big, 0, 3, 4, 2));   // row 3 not searched
    CHECK_FALSE(mask_allows_any(big, 0, 4, 4, 1));   // column 5 not searched
    CHECK(mask_allows_any(big, 4, 1, 0, 1));
}

TEST_CASE("padding mask: padded keys get weight 0 in every row, and compose with causal") {
    const bool valid[] = {true, true, false, true};
    const Mask padding = mask_padding(3, valid);
    CHECK(padding.rows() == 3);
    CHECK(padding.col(2).isZero());
    CHECK(padding.col(3).all());
    const Mask both = *mask_and(mask_causal(3, 4), padding);
    CHECK(both(2, 0));
    CHECK_FALSE(both(2, 2));   // padded
    CHECK_FALSE(both(0, 1));   // in the future
    CHECK_FALSE(mask_and(std::nullopt, std::nullopt).has_value());
    CHECK_THROWS_AS(mask_and(mask_causal(2, 2), mask_causal(3, 3)), Error);

    std::mt19937 rng(5);
    const AttentionWeights w = random_attention(8, 8, 2, 8, rng);
    AttentionOptions options;
    options.keep = padding;
    const AttentionTrace t = attention_forward(w, random_matrix(3, 8, rng), random_matrix(4, 8, rng), options);
    for (const HeadTrace& head : t.heads) {
        CHECK(head.weights.col(2).isZero(0.0f));
        for (Eigen::Index i = 0; i < 3; ++i) CHECK(std::abs(head.weights.row(i).sum() - 1.0f) < 1e-6f);
    }
}

TEST_CASE("head comparison: max difference and Jensen-Shannon divergence by hand") {
    Matrix p(3, 2), q(3, 2);
    p << 1.0f, 0.0f, 0.5f, 0.5f, 0.0f, 0.0f;   // a fully masked row in both: skipped
    q << 0.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f;
    const HeadComparison c = compare_heads(p, q);
    CHECK(c.rows_compared == 2);
    CHECK(c.max_abs_difference == 1.0);
    // Row 0: disjoint -> 1 bit. Row 1: M = (0.75, 0.25): 0.5 KL(P||M) + 0.5 KL(Q||M)
    //   = 0.5 (0.5 log2(2/3) + 0.5 log2 2) + 0.5 log2(4/3) = 0.311278 bits.
    const double row1 = 0.5 * (0.5 * std::log2(2.0 / 3.0) + 0.5) + 0.5 * std::log2(4.0 / 3.0);
    CHECK(std::abs(c.mean_js_divergence - (1.0 + row1) / 2.0) < 1e-6);
    CHECK(compare_heads(p, p).mean_js_divergence == 0.0);
    CHECK_THROWS_AS(compare_heads(p, Matrix(2, 2)), Error);
}

TEST_CASE("the full trace keeps the layer's input X, the fast path does not") {
    std::mt19937 rng(3);
    const AttentionWeights w = random_attention(8, 8, 2, 8, rng);
    const Matrix x = random_matrix(5, 8, rng);
    AttentionOptions options;
    CHECK(attention_forward(w, x, options).input.size() == 0);
    options.detail = TraceDetail::all_stages;
    CHECK(attention_forward(w, x, options).input == x);
}

// Found by tests/fuzz/fuzz_mha: an empty in_proj_weight [0, 3074457345618258603] (no
// bytes, so the file is valid) made 3 * E overflow (UBSan: signed integer overflow)
// before any shape check. Refused now, naming the file and tensor.
TEST_CASE("an empty in_proj_weight is refused before its width is used (fuzz regression)") {
    test::TempDir dir;
    const std::string path = dir.file("w.safetensors");
    const std::string header =
        R"({"in_proj_weight":{"dtype":"F32","shape":[0,3074457345618258603],"data_offsets":[0,0]}})";
    std::string bytes(8, '\0');
    const std::uint64_t length = header.size();
    std::memcpy(bytes.data(), &length, 8);
    test::write_bytes(path, bytes + header);
    try {
        load_attention_weights(SafetensorsFile::open(path), 1);
        FAIL("expected a refusal");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == path + ": tensor 'in_proj_weight': expected a non-empty matrix [out, in], "
                                              "got shape [0, 3074457345618258603]");
    }
}
