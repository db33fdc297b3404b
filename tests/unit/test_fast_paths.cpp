// The optimised paths of the forward pass against plain references computed here in
// double precision: the products' kernel (core/weight_panels) on strided blocks, at every
// edge of its tiles and blocks, with its AVX2 and its portable loops; the weight product
// on one thread and two; the softmax's run-of-keys path against its key-by-key path; and
// a whole attention layer on one thread against two.

#include "core/base/error.h"
#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "core/tensor/kernels/exp_sum.h"
#include "core/tensor/kernels/weight_panels.h"
#include "core/tensor/parallel.h"
#include "core/tensor/weight_matrix.h"
#include "test_support.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace headscope;
using headscope::test::random_matrix;

namespace {

using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double max_diff(const ConstMatrixRef& got, const MatrixD& want) {
    REQUIRE(got.rows() == want.rows());
    REQUIRE(got.cols() == want.cols());
    return (got.cast<double>() - want).cwiseAbs().maxCoeff();
}

// One self-attention layer of width E with H heads: seeded random weights (`scale`) and
// biases (0.1), as separate q, k, v and out projections.
AttentionWeights random_attention(Eigen::Index H, Eigen::Index E, float scale, std::mt19937& rng) {
    AttentionWeights w;
    w.n_heads = H;
    for (Linear* l : {&w.q, &w.k, &w.v, &w.out}) {
        l->weight = random_matrix(E, E, rng, scale);
        l->bias = random_matrix(E, 1, rng, 0.1f);
    }
    return w;
}

// softmax over the allowed keys of each row, in double; a row with none is all 0.
MatrixD reference_softmax(const Matrix& scores, const Mask& allowed) {
    MatrixD out = MatrixD::Zero(scores.rows(), scores.cols());
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (Eigen::Index j = 0; j < scores.cols(); ++j) {
            if (allowed(i, j)) max = std::max(max, static_cast<double>(scores(i, j)));
        }
        if (std::isinf(max)) continue;
        double sum = 0.0;
        for (Eigen::Index j = 0; j < scores.cols(); ++j) {
            if (allowed(i, j)) sum += std::exp(scores(i, j) - max);
        }
        for (Eigen::Index j = 0; j < scores.cols(); ++j) {
            if (allowed(i, j)) out(i, j) = std::exp(scores(i, j) - max) / sum;
        }
    }
    return out;
}

// Restores the thread count a test changed.
struct ThreadCount {
    int saved = compute_threads();
    ~ThreadCount() { set_compute_threads(saved); }
};

}   // namespace

TEST_CASE("weight panels: scale * x W^T + bias on strided blocks, at every tile and block edge, both kernels") {
    ThreadCount restore;
    std::mt19937 rng(7);
    // out around the 16-column panels, in around the 384-input blocks (x read in place),
    // T around the 6-row tiles and the 256-row blocks; then products of 16 panels or more
    // (x packed), around the 3072-input passes.
    std::vector<std::pair<Eigen::Index, Eigen::Index>> shapes;   // (out, in)
    for (const Eigen::Index out : {1, 15, 16, 17, 40}) {
        for (const Eigen::Index in : {1, 7, 384, 385, 800}) shapes.emplace_back(out, in);
    }
    for (const Eigen::Index out : {255, 256, 257}) shapes.emplace_back(out, 385);
    for (const Eigen::Index out : {1, 17, 256}) shapes.emplace_back(out, 3073);
    shapes.emplace_back(257, 7);
    const std::vector<Eigen::Index> Ts = {1, 5, 6, 7, 13, 300};
    for (const auto& shape : shapes) {
        const Eigen::Index out = shape.first;
        const Eigen::Index in = shape.second;
        CAPTURE(out);
        CAPTURE(in);
        // W as it lies in a checkpoint: rows 3 floats longer than the matrix, and once
        // as the transpose ([in, out], GPT-2's Conv1D).
        const Matrix stored = random_matrix(out, in + 3, rng, 0.5f);
        const auto w = stored.leftCols(in);
        const Matrix stored_t = random_matrix(in, out + 3, rng, 0.5f);
        const auto w_t = stored_t.leftCols(out);
        const WeightPanels panels(stored.data(), out, in, stored.cols(), false);
        const WeightPanels panels_t(stored_t.data(), out, in, stored_t.cols(), true);
        CHECK(panels.to_matrix() == w);
        CHECK(panels_t.to_matrix() == w_t.transpose());
        const Vector bias = random_matrix(out, 1, rng, 1.0f);
        for (const Eigen::Index T : Ts) {
            if (T * in * out > 40'000'000) continue;   // 300 rows of 3073 -> 256: no new edge, slow under asan
            CAPTURE(T);
            const Matrix x_full = random_matrix(T, in + 5, rng, 1.0f);
            const auto x = x_full.middleCols(2, in);   // rows in + 5 floats apart
            const MatrixD xw = x.cast<double>() * w.cast<double>().transpose();
            const MatrixD xw_t = x.cast<double>() * w_t.cast<double>();
            const double tolerance = 1e-5 * std::sqrt(static_cast<double>(in)) * 4;
            for (const auto kernel :
                 {WeightPanels::Kernel::best, WeightPanels::Kernel::avx2, WeightPanels::Kernel::portable}) {
                for (const int threads : {1, 2}) {
                    set_compute_threads(threads);
                    // The result goes into a block of a larger matrix; the rest stays.
                    Matrix y_full = Matrix::Constant(T + 2, out + 4, 5.0f);
                    auto y = y_full.block(1, 3, T, out);
                    panels.multiply_with(kernel, x, y, &bias, 0.5f);
                    CHECK(max_diff(y, (0.5 * xw).rowwise() + bias.cast<double>().transpose()) < tolerance);
                    CHECK(y_full.row(0).cwiseEqual(5.0f).all());
                    CHECK(y_full.row(T + 1).cwiseEqual(5.0f).all());
                    CHECK(y_full.leftCols(3).cwiseEqual(5.0f).all());
                    CHECK(y_full.rightCols(1).cwiseEqual(5.0f).all());
                    Matrix y_t = Matrix::Constant(T, out, 5.0f);   // overwritten, not added to
                    panels_t.multiply_with(kernel, x, y_t, nullptr);
                    CHECK(max_diff(y_t, xw_t) < tolerance);
                }
            }
        }
    }
    // No inputs: the bias alone, or zeros.
    const WeightPanels empty(nullptr, 3, 0, 0, false);
    Matrix y = Matrix::Constant(2, 3, 9.0f);
    empty.multiply(Matrix(2, 0), y);
    CHECK(y.cwiseAbs().maxCoeff() == 0.0f);
    const Vector bias = Vector::LinSpaced(3, 1.0f, 3.0f);
    empty.multiply(Matrix(2, 0), y, &bias);
    CHECK(y.row(1) == bias.transpose());
}

TEST_CASE("weight panels, leading parts (causal attention): each row's first outputs, or its product over its first "
          "inputs, as the whole product computes them (bit for bit with the x86 kernels); the rest skipped") {
    ThreadCount restore;
    std::mt19937 rng(17);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // Ends: causal (row i: i + 1, clipped), random, and a few rows with none.
    const auto make_ends = [&rng](Eigen::Index T, Eigen::Index limit, bool causal) {
        std::vector<Eigen::Index> ends(static_cast<std::size_t>(T));
        std::uniform_int_distribution<Eigen::Index> any(0, limit);
        for (Eigen::Index i = 0; i < T; ++i)
            ends[static_cast<std::size_t>(i)] = causal ? std::min(i + 1, limit) : any(rng);
        if (T > 3) ends[3] = 0;
        return ends;
    };
    // out around the panels and a wide one; in within one 384-input block and across blocks.
    for (const auto& shape :
         std::vector<std::pair<Eigen::Index, Eigen::Index>>{{40, 64}, {300, 64}, {64, 300}, {64, 800}}) {
        const Eigen::Index out = shape.first;
        const Eigen::Index in = shape.second;
        const Matrix w = random_matrix(out, in, rng, 0.5f);
        const WeightPanels panels(w.data(), out, in, in, false);
        for (const Eigen::Index T : {1, 7, 150, 300}) {
            const Matrix x = random_matrix(T, in, rng, 1.0f);
            for (const bool causal : {true, false}) {
                CAPTURE(out);
                CAPTURE(in);
                CAPTURE(T);
                CAPTURE(causal);
                const std::vector<Eigen::Index> out_ends = make_ends(T, out, causal);
                const std::vector<Eigen::Index> in_ends = make_ends(T, in, causal);
                // x with each row 0 from its end on, as softmax leaves masked weights.
                Matrix x_led = x;
                for (Eigen::Index i = 0; i < T; ++i) {
                    const Eigen::Index end = in_ends[static_cast<std::size_t>(i)];
                    x_led.row(i).tail(in - end).setZero();
                }
                for (const auto kernel :
                     {WeightPanels::Kernel::best, WeightPanels::Kernel::avx2, WeightPanels::Kernel::portable}) {
                    for (const int threads : {1, 2}) {
                        set_compute_threads(threads);
                        Matrix whole(T, out);
                        panels.multiply_with(kernel, x, whole, nullptr, 0.25f);
                        Matrix led = Matrix::Constant(T, out, nan);
                        panels.multiply_leading(kernel, x, led, out_ends, WeightPanels::Leading::outputs, 0.25f);
                        bool leading_equal = true;
                        bool past_tiles_untouched = true;
                        for (Eigen::Index i = 0; i < T; ++i) {
                            const Eigen::Index end = out_ends[static_cast<std::size_t>(i)];
                            leading_equal = leading_equal && led.row(i).head(end) == whole.row(i).head(end);
                            // Past the largest end of its 6-row tile, rounded up to a whole
                            // tile (32 columns with AVX-512, 16 otherwise): never written.
                            const Eigen::Index first = i / 6 * 6;
                            const Eigen::Index tile_end =
                                *std::max_element(out_ends.begin() + first, out_ends.begin() + std::min(T, first + 6));
                            const Eigen::Index written = std::min(out, (tile_end + 31) / 32 * 32);
                            past_tiles_untouched =
                                past_tiles_untouched && led.row(i).tail(out - written).array().isNaN().all();
                        }
                        CHECK(leading_equal);
                        CHECK(past_tiles_untouched);

                        Matrix whole_in(T, out);
                        panels.multiply_with(kernel, x_led, whole_in, nullptr, 0.25f);
                        Matrix led_in = Matrix::Constant(T, out, nan);
                        panels.multiply_leading(kernel, x_led, led_in, in_ends, WeightPanels::Leading::inputs, 0.25f);
                        CAPTURE(threads);
                        if (kernel == WeightPanels::Kernel::portable) {
                            // Plain loops the compiler vectorises as it sees fit, per trip
                            // count: the same sums, rounded alike only to within an ulp.
                            CHECK(max_diff(led_in, whole_in.cast<double>()) < 1e-6);
                        } else {
                            CHECK(led_in == whole_in);
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("weights times inputs: the same on 1 and 2 threads, over one row block and several, stored either way") {
    ThreadCount restore;
    std::mt19937 rng(11);
    const Matrix w = random_matrix(300, 96, rng, 0.1f);   // [out, in]
    const Vector bias = random_matrix(300, 1, rng, 1.0f);
    const Matrix w_t = w.transpose();   // as GPT-2's Conv1D stores it
    auto owner = std::make_shared<Matrix>(w_t);
    const WeightMatrix owned(w);
    const WeightMatrix view = WeightMatrix::view(owner, owner->data(), 96, 300, 300, true);
    for (const Eigen::Index T : {1, 17, 300, 1000}) {   // 256 rows to a block: 1, 1, 2 and 4 blocks
        CAPTURE(T);
        const Matrix x = random_matrix(T, 96, rng, 1.0f);
        const MatrixD want =
            (x.cast<double>() * w.cast<double>().transpose()).rowwise() + bias.cast<double>().transpose();
        for (const int threads : {1, 2}) {
            CAPTURE(threads);
            set_compute_threads(threads);
            for (const WeightMatrix* m : {&owned, &view}) {
                Matrix y(T, 300);
                m->multiply(x, y, &bias);
                CHECK(max_diff(y, want) < 1e-4);
            }
        }
    }
}

TEST_CASE("several weights times one input, as one product: each output as its own product gives it") {
    ThreadCount restore;
    std::mt19937 rng(13);
    // Outputs of 17, 256 and 40: together 16 panels or more, so x is packed once for all
    // three, though two of them alone would read it in place.
    const Eigen::Index in = 70;
    std::vector<WeightPanels> weights;
    std::vector<Vector> biases;
    for (const Eigen::Index out : {17, 256, 40}) {
        const Matrix w = random_matrix(out, in, rng, 0.3f);
        weights.emplace_back(w.data(), out, in, in, false);
        biases.push_back(random_matrix(out, 1, rng, 1.0f));
    }
    for (const Eigen::Index T : {1, 7, 300}) {
        CAPTURE(T);
        const Matrix x = random_matrix(T, in, rng, 1.0f);
        for (const auto kernel :
             {WeightPanels::Kernel::best, WeightPanels::Kernel::avx2, WeightPanels::Kernel::portable}) {
            for (const int threads : {1, 2}) {
                CAPTURE(threads);
                set_compute_threads(threads);
                Matrix a(T, 17), b(T, 256), c(T, 40);
                const WeightPanels::Output outputs[] = {
                    {&weights[0], a, &biases[0]}, {&weights[1], b, nullptr}, {&weights[2], c, &biases[2]}};
                WeightPanels::multiply_each(x, outputs, kernel);
                Matrix want_a(T, 17), want_b(T, 256), want_c(T, 40);
                weights[0].multiply_with(kernel, x, want_a, &biases[0]);
                weights[1].multiply_with(kernel, x, want_b, nullptr);
                weights[2].multiply_with(kernel, x, want_c, &biases[2]);
                CHECK(max_diff(a, want_a.cast<double>()) < 1e-5);
                CHECK(b == want_b);   // 16 panels alone: packed either way, the same sums
                CHECK(max_diff(c, want_c.cast<double>()) < 1e-5);
            }
        }
    }
    std::vector<Matrix> ys(WeightPanels::max_outputs + 1, Matrix(1, 17));
    std::vector<WeightPanels::Output> too_many;
    for (Matrix& y : ys) too_many.push_back({&weights[0], y, nullptr});
    CHECK_THROWS_WITH_AS(WeightPanels::multiply_each(Matrix(1, in), too_many), doctest::Contains("at most 4 outputs"),
                         std::invalid_argument);
}

TEST_CASE("softmax: rows with one run of allowed keys (causal) and rows with gaps agree with the reference") {
    std::mt19937 rng(3);
    const Eigen::Index T = 70;
    const Matrix scores = random_matrix(T, T, rng, 4.0f);
    Mask mask = mask_causal(T, T);                              // one run per row: a prefix
    for (Eigen::Index j = 10; j < 20; ++j) mask(5, j) = true;   // still one run (0..19)
    mask(40, 3) = false;                                        // a gap
    mask(41, 0) = false;                                        // one run, not from 0
    mask(42, 42) = false;                                       // one run, not to the diagonal
    mask.row(43).setConstant(false);                            // no key at all
    mask.row(44).setConstant(true);                             // every key
    mask(45, 0) = false;
    mask(45, 45) = false;   // a run in the middle
    Matrix got = scores;
    softmax_rows(got, &mask);
    CHECK(max_diff(got, reference_softmax(scores, mask)) < 1e-6);
    for (Eigen::Index i = 0; i < T; ++i) {
        for (Eigen::Index j = 0; j < T; ++j) {
            if (!mask(i, j)) CHECK(got(i, j) == 0.0f);   // exactly 0
        }
    }
    CHECK(got.row(43).cwiseAbs().maxCoeff() == 0.0f);
    // Without a mask, every row sums to 1.
    Matrix all = scores;
    softmax_rows(all, nullptr);
    CHECK(max_diff(all, reference_softmax(scores, Mask::Constant(T, T, true))) < 1e-6);
}

TEST_CASE("softmax: a run of allowed keys whose scores are all -inf gives 0, not NaN") {
    Matrix scores(1, 4);
    const float inf = std::numeric_limits<float>::infinity();
    scores << 1.0f, -inf, -inf, 2.0f;
    Mask mask(1, 4);
    mask << false, true, true, false;
    softmax_rows(scores, &mask);
    CHECK(scores.cwiseAbs().maxCoeff() == 0.0f);
}

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

TEST_CASE("attention after kept keys and values: the later rows of the whole layer; bad kept shapes refused") {
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
            CHECK(max_diff(got.logits, expected.logits.cast<double>()) < 1e-4);
            CHECK(max_diff(got.hidden, expected.hidden.cast<double>()) < 1e-5);
            REQUIRE(got.layer_inputs.size() == 2);
            for (std::size_t l = 0; l < 2; ++l) {
                CHECK(max_diff(got.layer_inputs[l], expected.layer_inputs[l].cast<double>()) < 1e-5);
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
}

TEST_CASE("exp_shifted_sum: exp(x - shift) within 2e-7 of double precision, and their sum, at every tail length") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> score(-90.0f, 0.0f);
    for (Eigen::Index n = 0; n <= 41; ++n) {
        CAPTURE(n);
        std::vector<float> values(static_cast<std::size_t>(n) + 1, 123.0f);   // one past the end: left alone
        for (Eigen::Index i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = score(rng) + 3.5f;
        const std::vector<float> before = values;
        const float sum = exp_shifted_sum(values.data(), n, 3.5f);
        double want_sum = 0.0;
        for (Eigen::Index i = 0; i < n; ++i) {
            const double want = std::exp(static_cast<double>(before[static_cast<std::size_t>(i)]) - 3.5);
            want_sum += want;
            const double got = values[static_cast<std::size_t>(i)];
            if (want >= 1.18e-38) {   // a normal float
                CHECK(std::abs(got - want) <= 2e-7 * want);
            } else {
                CHECK(got <= want);   // underflow: 0, or the denormal itself
            }
        }
        CHECK(std::abs(sum - want_sum) <= 1e-6 * std::max(1.0, want_sum));
        CHECK(values[static_cast<std::size_t>(n)] == 123.0f);
    }
    // exp(0) is exactly 1; exp(-inf) is 0; NaN stays NaN.
    std::vector<float> edge = {0.0f,
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               -1.0f,
                               -2.0f,
                               -3.0f,
                               -4.0f,
                               -5.0f,
                               -6.0f};
    const float sum = exp_shifted_sum(edge.data(), static_cast<Eigen::Index>(edge.size()), 0.0f);
    CHECK(edge[0] == 1.0f);
    CHECK(edge[1] == 0.0f);
    CHECK(std::isnan(edge[2]));
    CHECK(std::isnan(sum));
    CHECK(std::abs(edge[8] - std::exp(-6.0f)) <= 2e-7f * std::exp(-6.0f));
}

TEST_CASE("max_value and scale_values: every length and every place of the largest, nothing past the end touched") {
    std::mt19937 rng(12);
    std::uniform_real_distribution<float> score(-50.0f, 50.0f);
    const float minus_inf = -std::numeric_limits<float>::infinity();
    for (Eigen::Index n = 1; n <= 70; ++n) {
        CAPTURE(n);
        std::vector<float> values(static_cast<std::size_t>(n) + 1);
        for (float& v : values) v = score(rng);
        values[static_cast<std::size_t>(n)] = 1000.0f;   // one past the end: neither read nor written
        for (Eigen::Index at = 0; at < n; ++at) {
            CAPTURE(at);
            std::vector<float> row = values;
            row[static_cast<std::size_t>(at)] = 60.0f;
            CHECK(max_value(row.data(), n) == 60.0f);
        }
        std::vector<float> all_minus_inf(static_cast<std::size_t>(n), minus_inf);
        CHECK(max_value(all_minus_inf.data(), n) == minus_inf);
        std::vector<float> scaled = values;
        scale_values(scaled.data(), n, 0.25f);
        for (Eigen::Index i = 0; i < n; ++i)
            CHECK(scaled[static_cast<std::size_t>(i)] == values[static_cast<std::size_t>(i)] * 0.25f);
        CHECK(scaled[static_cast<std::size_t>(n)] == 1000.0f);
    }
}

TEST_CASE("ViT: with a classifier, the last layer's MLP runs for the rows the head reads alone, without one for all") {
    // The logits from those rows are PyTorch's (the checkpoint goldens, which cover these
    // three folders); here, that no other row is computed, or shown as data.
    const std::string checkpoints = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/";
    const RgbImage image = decode_image_file(std::string(HEADSCOPE_GOLDEN_DIR) + "/../images/rgb.png");
    struct Case {
        const char* folder;
        Eigen::Index read_rows;   // -1: every row
        Eigen::Index labels;
    };
    for (const Case& c : {Case{"vit_tiny", 1, 5}, Case{"deit_tiny_distilled", 2, 4}, Case{"vit_tiny_f16", -1, 0}}) {
        CAPTURE(c.folder);
        const auto model = open_model(checkpoints + c.folder, ToyConfig{});
        const ModelInput input = model->encode_image(image);
        const Eigen::Index T = input.embeddings.rows();
        for (const bool resumed : {false, true}) {
            CAPTURE(resumed);
            RunOptions options;
            options.keep_layer_inputs = true;
            const ModelTrace whole = model->forward(input, options);
            // A head toggled in the last layer: resumed there, the same rows again.
            RunOptions toggled = options;
            toggled.resume_from = &whole;
            toggled.resume_layer = model->info().n_layers - 1;
            toggled.disabled_heads.assign(static_cast<std::size_t>(model->info().n_layers),
                                          std::vector<bool>(static_cast<std::size_t>(model->info().n_heads), false));
            toggled.disabled_heads.back()[0] = true;
            const ModelTrace trace = resumed ? model->forward(input, toggled) : whole;
            CHECK(trace.hidden.rows() == (c.read_rows < 0 ? T : c.read_rows));
            CHECK(trace.hidden.cols() == model->info().width);
            CHECK(trace.hidden.allFinite());
            CHECK(trace.logits.size() == c.labels);
            CHECK(trace.layers.size() == static_cast<std::size_t>(model->info().n_layers));
            CHECK(trace.layers.back().output.rows() == T);   // the last attention: every row
        }
    }
}
