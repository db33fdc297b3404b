// The block's parts that today's decoder families add, against hand-computed values:
// RMSNorm (and Gemma's 1 + w), rotary positions, grouped key/value heads, the gated MLP,
// the soft cap, sliding windows and the parallel residual.

#include "core/nn/block.h"
#include "core/nn/mask.h"
#include "core/nn/position.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace headscope;
using namespace headscope::test;

TEST_CASE("RMSNorm: x / sqrt(mean(x^2) + eps) * w, and Gemma's (1 + w)") {
    Matrix x(1, 4);
    x << 1.0f, -2.0f, 3.0f, -4.0f;   // mean of squares 7.5
    Norm norm;
    norm.kind = NormKind::rms_norm;
    norm.eps = 0.5f;   // sqrt(8) = 2.828427
    norm.weight = Vector::Constant(4, 2.0f);
    const Matrix y = norm_forward(norm, x);
    CHECK(y(0, 0) == doctest::Approx(2.0 / std::sqrt(8.0)).epsilon(1e-6));
    CHECK(y(0, 3) == doctest::Approx(-8.0 / std::sqrt(8.0)).epsilon(1e-6));
    norm.kind = NormKind::rms_norm_plus_one;
    CHECK(norm_forward(norm, x)(0, 2) == doctest::Approx(9.0 / std::sqrt(8.0)).epsilon(1e-6));
}

TEST_CASE("rotary positions turn each half-pair by position * theta^(-2i/r)") {
    Matrix x(3, 4);   // one head of 4: pairs (0, 2) and (1, 3)
    x << 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4;
    Rotary rotary;
    rotary.theta = 100.0;            // inverse frequencies 1 and 1/10
    apply_rotary(rotary, x, 1, 5);   // positions 5, 6, 7
    for (int t = 0; t < 3; ++t) {
        const double p = 5 + t;
        CHECK(x(t, 0) == doctest::Approx(1 * std::cos(p) - 3 * std::sin(p)).epsilon(1e-5));
        CHECK(x(t, 2) == doctest::Approx(3 * std::cos(p) + 1 * std::sin(p)).epsilon(1e-5));
        CHECK(x(t, 1) == doctest::Approx(2 * std::cos(p / 10) - 4 * std::sin(p / 10)).epsilon(1e-5));
        CHECK(x(t, 3) == doctest::Approx(4 * std::cos(p / 10) + 2 * std::sin(p / 10)).epsilon(1e-5));
    }
}

TEST_CASE("grouped key/value heads equal the same heads with keys and values repeated") {
    std::mt19937 rng(3);
    const Eigen::Index E = 16, H = 4, Dh = 4, T = 5;
    AttentionWeights grouped;
    grouped.n_heads = H;
    grouped.n_kv_heads = 2;
    grouped.q.weight = random_matrix(H * Dh, E, rng);
    grouped.k.weight = random_matrix(2 * Dh, E, rng);
    grouped.v.weight = random_matrix(2 * Dh, E, rng);
    grouped.out.weight = random_matrix(E, H * Dh, rng);
    // repeat_kv: head h reads key/value head h / 2.
    AttentionWeights repeated = grouped;
    repeated.n_kv_heads = 0;
    Matrix k(H * Dh, E), v(H * Dh, E);
    const Matrix gk = grouped.k.weight.to_matrix(), gv = grouped.v.weight.to_matrix();
    for (Eigen::Index h = 0; h < H; ++h) {
        k.middleRows(h * Dh, Dh) = gk.middleRows(h / 2 * Dh, Dh);
        v.middleRows(h * Dh, Dh) = gv.middleRows(h / 2 * Dh, Dh);
    }
    repeated.k.weight = k;
    repeated.v.weight = v;
    const Matrix x = random_matrix(T, E, rng);
    for (const double theta : {0.0, 10000.0}) {
        grouped.rotary.theta = repeated.rotary.theta = theta;
        const AttentionTrace a = attention_forward(grouped, x);
        const AttentionTrace b = attention_forward(repeated, x);
        for (Eigen::Index h = 0; h < H; ++h) CHECK(max_abs_diff(a.heads[h].weights, b.heads[h].weights) <= 1e-6);
        CHECK(max_abs_diff(a.output, b.output) <= 1e-5);
        CHECK(a.keys.size() == 0);
    }
    AttentionWeights bad = grouped;
    bad.n_kv_heads = 3;
    CHECK_THROWS_WITH(bad.validate(), doctest::Contains("cannot share 3 key/value heads"));
}

TEST_CASE("the soft cap bounds every score at the cap") {
    std::mt19937 rng(5);
    AttentionWeights w;
    w.n_heads = 1;
    w.q.weight = random_matrix(4, 4, rng, 10.0f);
    w.k.weight = random_matrix(4, 4, rng, 10.0f);
    w.v.weight = random_matrix(4, 4, rng);
    w.out.weight = Matrix::Identity(4, 4);
    w.score_cap = 2.0f;
    AttentionOptions options;
    options.detail = TraceDetail::all_stages;
    const AttentionTrace t = attention_forward(w, random_matrix(6, 4, rng), options);
    CHECK(t.heads[0].scores.cwiseAbs().maxCoeff() <= 2.0f);
    CHECK(max_abs_diff(t.heads[0].scores, head_scores(w, t.heads[0].q, t.heads[0].k)) <= 1e-5);
}

TEST_CASE("a sliding window of W lets each query see its W latest keys") {
    const Mask m = mask_sliding_window(5, 2);
    for (Eigen::Index q = 0; q < 5; ++q) {
        for (Eigen::Index k = 0; k < 5; ++k) CHECK(m(q, k) == (k <= q && k >= q - 1));
    }
    CHECK_THROWS(mask_sliding_window(5, 0));
}

TEST_CASE("the gated MLP is down(silu(gate x) * up x), a parallel block adds both branches to x") {
    Mlp mlp;
    mlp.activation = Activation::silu;
    mlp.gate.weight = Matrix::Identity(2, 2);
    mlp.up.weight = Matrix::Constant(2, 2, 1.0f);
    mlp.down.weight = Matrix::Identity(2, 2);
    Matrix x(1, 2);
    x << 1.0f, -2.0f;
    const Matrix y = mlp_forward(mlp, x);
    const auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
    CHECK(y(0, 0) == doctest::Approx(silu(1.0) * -1.0).epsilon(1e-6));
    CHECK(y(0, 1) == doctest::Approx(silu(-2.0) * -1.0).epsilon(1e-6));

    std::mt19937 rng(7);
    Block block;
    block.attention.n_heads = 1;
    block.attention.q.weight = random_matrix(2, 2, rng);
    block.attention.k.weight = random_matrix(2, 2, rng);
    block.attention.v.weight = random_matrix(2, 2, rng);
    block.attention.out.weight = random_matrix(2, 2, rng);
    block.attention_norm.kind = NormKind::rms_norm;
    block.attention_norm.weight = Vector::Ones(2);
    block.mlp = mlp;
    BlockSpec spec;
    spec.residual = Residual::parallel;
    Matrix stream = random_matrix(3, 2, rng);
    const Matrix h = norm_forward(block.attention_norm, stream);   // shared by both branches (Phi)
    const Matrix expected = stream + attention_forward(block.attention, h).output + mlp_forward(mlp, h);
    block_forward(spec, block, stream, AttentionOptions{});
    CHECK(max_abs_diff(stream, expected) <= 1e-6);
}

TEST_CASE("a window as each row's key range equals the dense window mask, with or without a mask, with gaps") {
    std::mt19937 rng(11);
    const Eigen::Index E = 8, T = 9, W = 3;
    AttentionWeights w;
    w.n_heads = 2;
    w.q.weight = random_matrix(E, E, rng);
    w.k.weight = random_matrix(E, E, rng);
    w.v.weight = random_matrix(E, E, rng);
    w.out.weight = random_matrix(E, E, rng);
    const Matrix x = random_matrix(T, E, rng);
    Mask gaps = mask_causal(T, T);
    gaps(6, 5) = gaps(8, 7) = false;   // rows with holes inside the window
    for (const OptionalMask& run_mask : {OptionalMask{}, OptionalMask{mask_causal(T, T)}, OptionalMask{gaps}}) {
        // transformers' sliding overlay alone: key j > i - W (later keys stay allowed without a causal mask).
        Mask window(T, T);
        for (Eigen::Index i = 0; i < T; ++i) {
            for (Eigen::Index j = 0; j < T; ++j) window(i, j) = j > i - W;
        }
        AttentionOptions ranges;
        ranges.keep = run_mask;
        ranges.window = W;
        ranges.detail = TraceDetail::all_stages;
        AttentionOptions dense;
        dense.keep = mask_and(run_mask, window);
        dense.detail = TraceDetail::all_stages;
        const AttentionTrace a = attention_forward(w, x, ranges);
        const AttentionTrace b = attention_forward(w, x, dense);
        for (Eigen::Index h = 0; h < 2; ++h) {
            CHECK(a.heads[h].weights == b.heads[h].weights);
            CHECK(a.heads[h].masked == b.heads[h].masked);
            CHECK(a.heads[h].weights(8, 5) == 0.0f);   // outside the window: exactly 0
        }
        CHECK(a.output == b.output);
        CHECK(a.window == W);
    }
}

TEST_CASE("GPT-J's interleaved layout turns the pairs (2i, 2i + 1)") {
    Matrix x(1, 4);
    x << 1, 2, 3, 4;
    Rotary rotary;
    rotary.theta = 100.0;   // inverse frequencies 1 and 1/10
    rotary.layout = RotaryLayout::interleaved;
    apply_rotary(rotary, x, 1, 3);
    CHECK(x(0, 0) == doctest::Approx(1 * std::cos(3.0) - 2 * std::sin(3.0)).epsilon(1e-5));
    CHECK(x(0, 1) == doctest::Approx(2 * std::cos(3.0) + 1 * std::sin(3.0)).epsilon(1e-5));
    CHECK(x(0, 2) == doctest::Approx(3 * std::cos(0.3) - 4 * std::sin(0.3)).epsilon(1e-5));
    CHECK(x(0, 3) == doctest::Approx(4 * std::cos(0.3) + 3 * std::sin(0.3)).epsilon(1e-5));
}

TEST_CASE("rope scaling: linear divides, llama3 keeps short wavelengths and slows long ones, dynamic grows") {
    Rotary rotary;
    rotary.theta = 10000.0;
    const RotaryFrequencies plain = rotary_frequencies(rotary, 8, 4);   // 1, 0.1, 0.01, 0.001
    CHECK(plain.inverse[1] == doctest::Approx(0.1).epsilon(1e-6));
    rotary.scaling.type = RopeScaling::Type::linear;
    rotary.scaling.factor = 4.0;
    CHECK(rotary_frequencies(rotary, 8, 4).inverse[1] == doctest::Approx(0.025).epsilon(1e-6));
    // llama3 over an original context of 64: wavelengths 2 pi / f are 6.3, 63, 628, 6283;
    // low_freq_wavelen 64, high_freq_wavelen 16: the first stays, the last two are divided
    // by the factor, the second is blended with smooth = (64 / 62.83 - 1) / 3.
    rotary.scaling = {};
    rotary.scaling.type = RopeScaling::Type::llama3;
    rotary.scaling.factor = 8.0;
    rotary.scaling.original_max_positions = 64;
    const RotaryFrequencies llama3 = rotary_frequencies(rotary, 8, 4);
    CHECK(llama3.inverse[0] == doctest::Approx(1.0).epsilon(1e-6));
    const double smooth = (64.0 / (2 * M_PI / 0.1) - 1.0) / 3.0;
    CHECK(llama3.inverse[1] == doctest::Approx((1 - smooth) * 0.1 / 8 + smooth * 0.1).epsilon(1e-5));
    CHECK(llama3.inverse[2] == doctest::Approx(0.01 / 8).epsilon(1e-5));
    CHECK(llama3.attention_factor == 1.0f);
    // Dynamic NTK: unchanged up to the trained length, a larger base past it.
    rotary.scaling = {};
    rotary.scaling.type = RopeScaling::Type::dynamic;
    rotary.scaling.factor = 2.0;
    rotary.scaling.max_positions = 16;
    CHECK(rotary_frequencies(rotary, 8, 16).inverse[1] == plain.inverse[1]);
    const double base = 10000.0 * std::pow(2.0 * 32 / 16 - 1.0, 8.0 / 6.0);
    CHECK(rotary_frequencies(rotary, 8, 32).inverse[1] == doctest::Approx(1.0 / std::pow(base, 0.25)).epsilon(1e-5));
    CHECK(rotary.depends_on_length());
}

TEST_CASE("the stages keep q and k before the rotation: turning them gives the q and k multiplied") {
    std::mt19937 rng(13);
    AttentionWeights w;
    w.n_heads = 2;
    w.n_kv_heads = 1;
    w.q.weight = random_matrix(8, 8, rng);
    w.k.weight = random_matrix(4, 8, rng);
    w.v.weight = random_matrix(4, 8, rng);
    w.out.weight = random_matrix(8, 8, rng);
    w.rotary.theta = 10000.0;
    AttentionOptions options;
    options.detail = TraceDetail::all_stages;
    const AttentionTrace t = attention_forward(w, random_matrix(5, 8, rng), options);
    for (const HeadTrace& head : t.heads) {
        Matrix q = head.q_unrotated;
        Matrix k = head.k_unrotated;
        apply_rotary(w.rotary, q, 1, 0);
        apply_rotary(w.rotary, k, 1, 0);
        CHECK(q == head.q);
        CHECK(k == head.k);
        CHECK(head.q_unrotated != head.q);
    }
    w.rotary.theta = 0.0;   // no rotation: nothing kept twice
    CHECK(attention_forward(w, random_matrix(5, 8, rng), options).heads[0].q_unrotated.size() == 0);
}

TEST_CASE("a long input's MLP, run a chunk of rows at a time, equals the rows' MLP bit for bit, gated or not") {
    std::mt19937 rng(5);
    for (const bool gated : {false, true}) {
        CAPTURE(gated);
        Mlp mlp;
        mlp.activation = gated ? Activation::silu : Activation::gelu;
        mlp.up = {random_matrix(96, 40, rng, 0.2f), random_matrix(96, 1, rng, 0.1f)};
        if (gated) mlp.gate = {random_matrix(96, 40, rng, 0.2f), Vector()};
        mlp.down = {random_matrix(40, 96, rng, 0.2f), random_matrix(40, 1, rng, 0.1f)};
        const Matrix x = random_matrix(2100, 40, rng, 1.0f);   // three chunks of at most 1,024 rows
        const Matrix whole = mlp_forward(mlp, x);
        for (Eigen::Index first = 0; first < x.rows(); first += 300) {   // 300 rows: never chunked
            const Eigen::Index n = std::min<Eigen::Index>(300, x.rows() - first);
            CHECK(whole.middleRows(first, n) == mlp_forward(mlp, x.middleRows(first, n)));
        }
    }
}
