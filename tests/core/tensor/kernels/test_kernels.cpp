// The kernels (core/tensor/kernels) against plain references in double precision: the
// products on strided blocks at every edge of their tiles and blocks, with the AVX2 and the
// portable loops, on one thread and two; the softmax's run-of-keys path and its exp-sum.

#include "core/base/error.h"
#include "core/fast_path_support.h"
#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "core/tensor/dtype.h"
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
          "inputs, as the whole product computes them (bit for bit with the x86 kernels), the rest skipped") {
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

TEST_CASE("16-bit panels (BF16, F16): bit for bit the products of their values widened to float first (the x86 "
          "kernels), every edge, stored either way, whole rows and leading parts, on 1 and 2 threads") {
    ThreadCount restore;
    std::mt19937 rng(17);
    // Shapes around the 16-column panels, the 384- and 3072-input blocks and packing (16 panels).
    const std::vector<std::pair<Eigen::Index, Eigen::Index>> shapes = {{1, 1},     {15, 7},     {17, 385}, {40, 800},
                                                                       {256, 385}, {257, 3073}, {33, 3073}};
    for (const DType element : {DType::BF16, DType::F16}) {
        CAPTURE(dtype_name(element));
        for (const auto& shape : shapes) {
            const Eigen::Index out = shape.first;   // not a structured binding: CAPTURE's lambda reads them
            const Eigen::Index in = shape.second;
            CAPTURE(out);
            CAPTURE(in);
            // The stored 16-bit values ([out, in + 3] and [in, out + 2]), and the same widened.
            const auto narrow = [&](const Matrix& m) {
                std::vector<std::uint16_t> bits(static_cast<std::size_t>(m.size()));
                for (Eigen::Index i = 0; i < m.size(); ++i) {
                    bits[static_cast<std::size_t>(i)] =
                        element == DType::BF16 ? float_to_bfloat16(m.data()[i]) : float_to_half(m.data()[i]);
                }
                return bits;
            };
            const auto widen = [&](const std::vector<std::uint16_t>& bits, Eigen::Index rows, Eigen::Index cols) {
                Matrix m(rows, cols);
                convert_to_float(element, reinterpret_cast<const std::byte*>(bits.data()),
                                 std::span(m.data(), static_cast<std::size_t>(m.size())));
                return m;
            };
            const std::vector<std::uint16_t> stored = narrow(random_matrix(out, in + 3, rng, 0.5f));
            const std::vector<std::uint16_t> stored_t = narrow(random_matrix(in, out + 2, rng, 0.5f));
            const Matrix wide = widen(stored, out, in + 3);
            const Matrix wide_t = widen(stored_t, in, out + 2);
            const WeightPanels half(stored.data(), element, out, in, in + 3, false);
            const WeightPanels half_t(stored_t.data(), element, out, in, out + 2, true);
            const WeightPanels full(wide.data(), out, in, in + 3, false);
            const WeightPanels full_t(wide_t.data(), out, in, out + 2, true);
            CHECK(half.element() == element);
            CHECK(half.bytes() * 2 == full.bytes());
            CHECK(half.to_matrix() == full.to_matrix());
            CHECK(half_t.to_matrix() == full_t.to_matrix());
            const Vector bias = random_matrix(out, 1, rng, 1.0f);
            for (const Eigen::Index T : {1, 7, 300}) {
                if (T * in * out > 40'000'000) continue;
                CAPTURE(T);
                const Matrix x = random_matrix(T, in, rng, 1.0f);
                std::vector<Eigen::Index> ends(static_cast<std::size_t>(T));
                for (Eigen::Index i = 0; i < T; ++i) ends[static_cast<std::size_t>(i)] = (i * 7 + 1) % (in + 1);
                for (const auto kernel :
                     {WeightPanels::Kernel::best, WeightPanels::Kernel::avx2, WeightPanels::Kernel::portable}) {
                    for (const int threads : {1, 2}) {
                        CAPTURE(threads);
                        set_compute_threads(threads);
                        // Bit for bit with the x86 kernels; the portable loops, which the
                        // compiler vectorises per element type, to within an ulp or so.
                        const auto same = [&](const Matrix& got, const Matrix& expected) {
                            if (kernel == WeightPanels::Kernel::portable) {
                                CHECK(max_diff(got, expected.cast<double>()) < 1e-5 * std::sqrt(double(in)) * 4);
                            } else {
                                CHECK(got == expected);
                            }
                        };
                        Matrix y(T, out), want(T, out);
                        half.multiply_with(kernel, x, y, &bias, 0.5f);
                        full.multiply_with(kernel, x, want, &bias, 0.5f);
                        same(y, want);
                        half_t.multiply_with(kernel, x, y, nullptr);
                        full_t.multiply_with(kernel, x, want, nullptr);
                        same(y, want);
                        // Rows zero past their ends: each tile reads its inputs only so far.
                        Matrix x_leading = x;
                        for (Eigen::Index i = 0; i < T; ++i) {
                            const Eigen::Index end = ends[static_cast<std::size_t>(i)];
                            x_leading.row(i).tail(in - end).setZero();
                        }
                        half.multiply_leading(kernel, x_leading, y, ends, WeightPanels::Leading::inputs);
                        full.multiply_leading(kernel, x_leading, want, ends, WeightPanels::Leading::inputs);
                        same(y, want);
                    }
                }
            }
        }
    }
    // A checkpoint's BF16 weight read in place: the same product as its values as float.
    auto bits = std::make_shared<std::vector<std::uint16_t>>(std::vector<std::uint16_t>{
        float_to_bfloat16(1.5f), float_to_bfloat16(-2.0f), float_to_bfloat16(0.25f), float_to_bfloat16(3.0f)});
    const WeightMatrix view = WeightMatrix::view(bits, bits->data(), DType::BF16, 2, 2, 2, true);
    CHECK(view.element() == DType::BF16);
    CHECK(view.to_matrix() == (Matrix(2, 2) << 1.5f, 0.25f, -2.0f, 3.0f).finished());
    CHECK(view.middle_rows(1, 1).to_matrix() == (Matrix(1, 2) << -2.0f, 3.0f).finished());
    const std::int64_t ids[] = {1, 0};
    CHECK(view.gather_rows(ids) == (Matrix(2, 2) << -2.0f, 3.0f, 1.5f, 0.25f).finished());
    CHECK(view == WeightMatrix(view.to_matrix()));
    Matrix y(1, 2);
    view.multiply((Matrix(1, 2) << 1.0f, 2.0f).finished(), y);
    CHECK(y == (Matrix(1, 2) << 2.0f, 4.0f).finished());
    CHECK_THROWS_WITH_AS(view.stored(), doctest::Contains("stored as BF16"), Error);
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
