// Head metrics, attention rollout, DINO masks and head similarity: hand-built maps with
// answers worked out in the comments, then the golden files of
// tools/analysis_reference.py (an independent NumPy implementation) on seeded cases.

#include "core/analysis/head_compare.h"
#include "core/analysis/head_metrics.h"
#include "core/analysis/head_roles.h"
#include "core/analysis/head_similarity.h"
#include "core/analysis/rollout.h"
#include "core/base/error.h"
#include "core/nn/mask.h"

#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace headscope;

namespace {

constexpr double tolerance = 1e-6;   // hand cases: absolute, every value here is O(1)

bool near(double a, double b, double tol = tolerance) { return std::abs(a - b) <= tol; }

// Golden comparisons: 1e-5 relative, with an absolute floor for values near 0.
bool golden_near(double actual, double expected) {
    return std::abs(actual - expected) <= 1e-6 + 1e-5 * std::abs(expected);
}

Matrix uniform(Eigen::Index T) { return Matrix::Constant(T, T, 1.0f / static_cast<float>(T)); }

// A trace of one layer per entry of `layers`, each a list of head maps.
ModelTrace trace_of(const std::vector<std::vector<Matrix>>& layers, OptionalMask mask = std::nullopt) {
    ModelTrace trace;
    for (const auto& heads : layers) {
        AttentionTrace layer;
        for (const Matrix& w : heads) {
            HeadTrace head;
            head.weights = w;
            layer.heads.push_back(head);
        }
        trace.layers.push_back(layer);
    }
    trace.mask = std::move(mask);
    return trace;
}

// A random row-stochastic map.
Matrix random_map(Eigen::Index T, std::mt19937& rng) {
    Matrix m = test::random_matrix(T, T, rng).array().exp().matrix();
    const Vector sums = m.rowwise().sum();
    m.array().colwise() /= sums.array();
    return m;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}   // namespace

// ------------------------------------------------------------------------ head metrics

TEST_CASE("analysis: uniform rows have entropy ln T and normalised entropy 1") {
    const HeadMetrics m = compute_head_metrics(uniform(4), nullptr, MetricContext{});
    CHECK(near(m.entropy, std::log(4.0)));
    CHECK(near(m.entropy_norm, 1.0));
    CHECK(near(m.max_weight, 0.25));
    CHECK(near(m.top_k_mass, 1.0));   // k = 5 > T: the whole row
    CHECK(near(m.sink_mass, 0.25));
    CHECK(near(m.diag, 0.25));
    CHECK(near(m.prev_token, 0.25));
    // Row i: sum_j |i - j| / 4 = 1.5, 1, 1, 1.5.
    CHECK(near(m.mean_distance, 1.25));
    CHECK(m.special_mass == 0.0);
    CHECK_FALSE(m.induction.has_value());   // no ids
    MetricContext two;
    two.top_k = 2;
    CHECK(near(compute_head_metrics(uniform(4), nullptr, two).top_k_mass, 0.5));
}

TEST_CASE("analysis: the identity map has distance 0, diagonal 1, entropy 0") {
    const HeadMetrics m = compute_head_metrics(Matrix::Identity(5, 5), nullptr, MetricContext{});
    CHECK(m.mean_distance == 0.0);
    CHECK(near(m.diag, 1.0));
    CHECK(m.entropy == 0.0);
    CHECK(m.entropy_norm == 0.0);
    CHECK(near(m.max_weight, 1.0));
    CHECK(m.prev_token == 0.0);
    CHECK(near(m.sink_mass, 0.2));   // only row 0 looks at token 0
}

TEST_CASE("analysis: a previous-token head scores prev_token 1") {
    Matrix w = Matrix::Zero(5, 5);
    w(0, 0) = 1.0f;   // row 0 has no previous token: it looks at itself
    for (Eigen::Index i = 1; i < 5; ++i) w(i, i - 1) = 1.0f;
    const HeadMetrics m = compute_head_metrics(w, nullptr, MetricContext{});
    CHECK(near(m.prev_token, 1.0));
    CHECK(near(m.diag, 0.2));
    CHECK(near(m.mean_distance, 4.0 / 5.0));
}

TEST_CASE("analysis: an induction head on a repeated sequence scores 1, no repeats give none") {
    // ids 1 2 3 1 2 3: positions 3, 4, 5 saw their token at 0, 1, 2, so an induction
    // head looks at what came next there: keys 1, 2, 3.
    Matrix w = Matrix::Identity(6, 6);
    for (Eigen::Index i = 3; i < 6; ++i) {
        w.row(i).setZero();
        w(i, i - 2) = 1.0f;
    }
    MetricContext context;
    context.ids = {1, 2, 3, 1, 2, 3};
    const HeadMetrics m = compute_head_metrics(w, nullptr, context);
    REQUIRE(m.induction.has_value());
    CHECK(near(*m.induction, 1.0));
    // The latest earlier occurrence counts: ids 7 7 7 7, row 3 saw 7 last at 2, so key 3
    // (not key 1, after the first 7). Row 1 -> key 1, row 2 -> key 2, row 3 -> key 3.
    context.ids = {7, 7, 7, 7};
    Matrix w2 = Matrix::Identity(4, 4);
    w2.row(3) << 0.0f, 0.5f, 0.0f, 0.5f;
    const HeadMetrics latest = compute_head_metrics(w2, nullptr, context);
    REQUIRE(latest.induction.has_value());
    CHECK(near(*latest.induction, (1.0 + 1.0 + 0.5) / 3.0));
    context.ids = {1, 2, 3, 4, 5, 6};
    CHECK_FALSE(compute_head_metrics(w, nullptr, context).induction.has_value());
}

TEST_CASE("analysis: image distance renormalises over patches, in input pixels") {
    // [CLS] + a 2 x 2 grid of 16-pixel patches: positions 1..4 are patches 0..3.
    Matrix w = Matrix::Zero(5, 5);
    w.row(0).setConstant(0.2f);
    w.row(1) << 0.5f, 0.25f, 0.0f, 0.0f, 0.25f;   // patch 0: half on [CLS], then itself and patch 3
    w(2, 2) = 1.0f;                               // patch 1 on itself
    w(3, 3) = 1.0f;                               // patch 2 on itself
    w(4, 0) = 1.0f;                               // patch 3 only on [CLS]: no patch distance
    MetricContext context;
    context.grid_width = 2;
    context.grid_height = 2;
    context.n_prefix_tokens = 1;
    context.patch_pixels = 16.0;
    context.special = {true, false, false, false, false};
    const HeadMetrics m = compute_head_metrics(w, nullptr, context);
    // Patch 0 renormalised: 1/2 on itself, 1/2 on patch 3 at 16 sqrt(2) pixels; rows of
    // patches 1 and 2: 0; patch 3 and [CLS] left out: (8 sqrt 2 + 0 + 0) / 3.
    CHECK(near(m.mean_distance, 8.0 * std::sqrt(2.0) / 3.0, 1e-5));
    // Sink and special mass (the [CLS] column) over all 5 rows: (0.2 + 0.5 + 1) / 5.
    CHECK(near(m.sink_mass, 0.34));
    CHECK(near(m.special_mass, 0.34));
    CHECK_FALSE(m.induction.has_value());
    context.grid_height = 3;
    CHECK(error_of([&] { compute_head_metrics(w, nullptr, context); }) ==
          "metrics: 1 prefix tokens and a 2 x 3 patch grid do not make the maps' 5 positions");
}

TEST_CASE("analysis: special mass sums the flagged columns, sink mass the first") {
    Matrix w(3, 3);
    w << 0.5f, 0.25f, 0.25f, 0.1f, 0.3f, 0.6f, 0.0f, 0.0f, 1.0f;
    MetricContext context;
    context.special = {true, false, true};
    const HeadMetrics m = compute_head_metrics(w, nullptr, context);
    CHECK(near(m.sink_mass, 0.6 / 3.0));
    CHECK(near(m.special_mass, (0.75 + 0.7 + 1.0) / 3.0));
}

TEST_CASE("analysis: entropy under a causal mask is normalised by each row's own keys") {
    // Uniform over the allowed keys: row 0 has one key (entropy_norm 0 by definition),
    // rows 1 and 2 are uniform over 2 and 3 keys (1 each).
    Matrix w(3, 3);
    w << 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 1.0f / 3, 1.0f / 3, 1.0f / 3;
    const Mask causal = mask_causal(3, 3);
    const HeadMetrics m = compute_head_metrics(w, &causal, MetricContext{});
    CHECK(near(m.entropy_norm, 2.0 / 3.0));
    CHECK(near(m.entropy, (std::log(2.0) + std::log(3.0)) / 3.0));
    // A fully masked row (all-zero weights) is not averaged in.
    Mask cut = causal;
    cut.row(2).setConstant(false);
    Matrix masked = w;
    masked.row(2).setZero();
    const HeadMetrics two = compute_head_metrics(masked, &cut, MetricContext{});
    CHECK(near(two.entropy_norm, 0.5));
    CHECK(near(two.diag, 0.75));
    // So is a row the mask allows but whose weights are all 0.
    CHECK(near(compute_head_metrics(masked, &causal, MetricContext{}).entropy_norm, 0.5));
}

TEST_CASE("analysis: metrics refuse mis-shaped maps, masks and contexts") {
    CHECK(error_of([] { compute_head_metrics(Matrix::Zero(2, 3), nullptr, MetricContext{}); }) ==
          "metrics: the map is [2, 3], not square (self-attention)");
    const Mask small = mask_causal(2, 2);
    CHECK(error_of([&] { compute_head_metrics(uniform(3), &small, MetricContext{}); }) ==
          "metrics: the mask is [2, 2], the maps [3, 3]");
    MetricContext ids;
    ids.ids = {1, 2};
    CHECK(error_of([&] { compute_head_metrics(uniform(3), nullptr, ids); }) ==
          "metrics: 2 token ids for maps of 3 positions");
    MetricContext k;
    k.top_k = 0;
    CHECK(error_of([&] { compute_head_metrics(uniform(3), nullptr, k); }) == "metrics: top_k 0 is below 1");
    const ModelTrace mixed = trace_of({{uniform(3)}, {uniform(4)}});
    CHECK(error_of([&] { compute_model_metrics(mixed, MetricContext{}); }) ==
          "metrics: a map is [4, 4], expected [3, 3]");
}

TEST_CASE("analysis: model metrics run layer-major over every head, with the trace's mask") {
    const Mask causal = mask_causal(3, 3);
    Matrix lower(3, 3);
    lower << 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 1.0f / 3, 1.0f / 3, 1.0f / 3;
    const ModelTrace trace = trace_of({{lower, Matrix::Identity(3, 3)}, {lower, lower}}, causal);
    const auto all = compute_model_metrics(trace, MetricContext{});
    REQUIRE(all.size() == 4);
    CHECK(all[1].layer == 0);
    CHECK(all[1].head == 1);
    CHECK(all[2].layer == 1);
    CHECK(all[2].head == 0);
    CHECK(near(all[3].entropy_norm, 2.0 / 3.0));
    CHECK(near(all[1].diag, 1.0));
}

TEST_CASE("analysis: the metric context of text, ids and image inputs") {
    ModelInput text;
    text.ids = {101, 7, 8, 102};
    text.spans = {{0, 0}, {0, 3}, {4, 7}, {0, 0}};   // [CLS] one two [SEP]
    const MetricContext t = metric_context(text, ModelInfo{});
    CHECK(t.ids == text.ids);
    CHECK(t.special == std::vector<bool>{true, false, false, true});
    CHECK(t.grid_width == 0);
    // Token ids typed in: every span empty, so nothing is known to be special.
    ModelInput typed = text;
    typed.spans.assign(4, {0, 0});
    CHECK(metric_context(typed, ModelInfo{}).special.empty());
    typed.spans.clear();
    CHECK(metric_context(typed, ModelInfo{}).special.empty());
    ModelInput image;
    image.grid_width = 3;
    image.grid_height = 2;
    image.n_prefix_tokens = 2;
    ModelInfo vit;
    vit.patch_size = 16;
    const MetricContext i = metric_context(image, vit);
    CHECK(i.ids.empty());
    CHECK(i.special == std::vector<bool>{true, true, false, false, false, false, false, false});
    CHECK(i.patch_pixels == 16.0);
    CHECK(i.grid_height == 2);
    CHECK(i.n_prefix_tokens == 2);
}

TEST_CASE("analysis: metric names round-trip and induction can be absent") {
    for (int i = 0; i < metric_count; ++i) {
        const auto metric = static_cast<Metric>(i);
        CHECK(metric_from_name(metric_name(metric)) == metric);
    }
    CHECK(metric_name(Metric::prev_token) == "prev_token");
    CHECK(metric_name(Metric::entropy_norm) == "entropy_norm");
    CHECK_FALSE(metric_from_name("entropy ").has_value());
    HeadMetrics m;
    m.diag = 0.5;
    CHECK(metric_value(m, Metric::diag) == 0.5);
    CHECK_FALSE(metric_value(m, Metric::induction).has_value());
    m.induction = 0.25;
    CHECK(metric_value(m, Metric::induction) == 0.25);
}

// ------------------------------------------------------------------------ rollout

TEST_CASE("analysis: rollout of identity maps is the identity, for every fusion") {
    const ModelTrace trace =
        trace_of({{Matrix::Identity(4, 4), Matrix::Identity(4, 4)}, {Matrix::Identity(4, 4), Matrix::Identity(4, 4)}});
    for (const HeadFusion fusion : {HeadFusion::mean, HeadFusion::max, HeadFusion::min}) {
        RolloutOptions options;
        options.fusion = fusion;
        CHECK(attention_rollout(trace, options).isApprox(Matrix::Identity(4, 4)));
    }
}

TEST_CASE("analysis: rollout of one layer by hand, per fusion") {
    Matrix swap(2, 2);
    swap << 0.0f, 1.0f, 1.0f, 0.0f;
    const ModelTrace trace = trace_of({{Matrix::Identity(2, 2), swap}});
    RolloutOptions options;
    // mean: all 1/2; + I, / 2: rows (3/4, 1/4) and (1/4, 3/4).
    Matrix mean(2, 2);
    mean << 0.75f, 0.25f, 0.25f, 0.75f;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), mean) <= tolerance);
    // max: all 1; + I = (2, 1; 1, 2), rows over 3.
    options.fusion = HeadFusion::max;
    Matrix max(2, 2);
    max << 2.0f / 3, 1.0f / 3, 1.0f / 3, 2.0f / 3;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), max) <= tolerance);
    // min: all 0; + I, renormalised: the identity.
    options.fusion = HeadFusion::min;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), Matrix::Identity(2, 2)) <= tolerance);
}

TEST_CASE("analysis: rollout discards the lowest entries but never entry (0, 0)") {
    Matrix a(2, 2);
    a << 0.1f, 0.9f, 0.6f, 0.4f;
    const ModelTrace trace = trace_of({{a}});
    RolloutOptions options;
    options.discard_ratio = 0.5;
    // floor(0.5 * 4) = 2 lowest: 0.1 at flat 0 (spared) and 0.4 at (1, 1), zeroed:
    // (0.1, 0.9; 0.6, 0) + I, / 2 = (0.55, 0.45; 0.3, 0.5); row 1 over its sum 0.8.
    Matrix expected(2, 2);
    expected << 0.55f, 0.45f, 0.375f, 0.625f;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), expected) <= tolerance);
    // Ties go by flat index: of four equal entries the floor(0.5 * 4) = 2 lowest are flat 0
    // (spared) and 1: (0.5, 0; 0.5, 0.5) + I, / 2 = (0.75, 0; 0.25, 0.75), row 0 over 0.75.
    const ModelTrace flat = trace_of({{Matrix::Constant(2, 2, 0.5f)}});
    Matrix tied(2, 2);
    tied << 1.0f, 0.0f, 0.25f, 0.75f;
    CHECK(test::max_abs_diff(attention_rollout(flat, options), tied) <= tolerance);
}

TEST_CASE("analysis: rollout multiplies later layers on the left, and skips what it is told to") {
    Matrix a(2, 2), b(2, 2);
    a << 0.2f, 0.8f, 0.6f, 0.4f;
    b << 0.9f, 0.1f, 0.3f, 0.7f;
    const auto residual = [](const Matrix& m) {
        Matrix r = 0.5f * (m + Matrix::Identity(m.rows(), m.cols()));
        const Vector sums = r.rowwise().sum();
        r.array().colwise() /= sums.array();
        return r;
    };
    const ModelTrace trace = trace_of({{a}, {b}});
    RolloutOptions options;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), Matrix(residual(b) * residual(a))) <= tolerance);
    options.start_layer = 1;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), residual(b)) <= tolerance);
    options.start_layer = 0;
    options.end_layer = 0;
    CHECK(test::max_abs_diff(attention_rollout(trace, options), residual(a)) <= tolerance);
    // A layer with every head disabled is the identity.
    options.end_layer = -1;
    options.disabled_heads = {{false}, {true}};
    CHECK(test::max_abs_diff(attention_rollout(trace, options), residual(a)) <= tolerance);
    options.disabled_heads = {{true}, {true}};
    CHECK(test::max_abs_diff(attention_rollout(trace, options), Matrix::Identity(2, 2)) <= tolerance);
}

TEST_CASE("analysis: rollout refuses options out of range in one line") {
    const ModelTrace trace = trace_of({{uniform(3), uniform(3)}, {uniform(3), uniform(3)}});
    const auto message = [&](const RolloutOptions& o) { return error_of([&] { attention_rollout(trace, o); }); };
    RolloutOptions o;
    o.discard_ratio = 1.5;
    CHECK(message(o) == "rollout: discard ratio 1.5 is outside [0, 1)");
    o.discard_ratio = 1.0;
    CHECK(message(o) == "rollout: discard ratio 1 is outside [0, 1)");
    o.discard_ratio = -0.1;
    CHECK(message(o) == "rollout: discard ratio -0.1 is outside [0, 1)");
    o.discard_ratio = std::nan("");
    CHECK(message(o).starts_with("rollout: discard ratio"));
    o = {};
    o.start_layer = 2;
    CHECK(message(o) == "rollout: start layer 2 is outside 0..1");
    o.start_layer = -1;
    CHECK(message(o) == "rollout: start layer -1 is outside 0..1");
    o = {};
    o.end_layer = 2;
    CHECK(message(o) == "rollout: end layer 2 is outside 0..1 (or -1 for the last)");
    o.end_layer = -2;
    CHECK(message(o) == "rollout: end layer -2 is outside 0..1 (or -1 for the last)");
    o = {};
    o.start_layer = 1;
    o.end_layer = 0;
    CHECK(message(o) == "rollout: start layer 1 is after end layer 0");
    o = {};
    o.disabled_heads = {{false, false}};
    CHECK(message(o) == "rollout: disabled heads are not 2 layers x 2 heads like the trace");
    o.disabled_heads = {{false, false}, {false, false}, {false, false}};
    CHECK(message(o) == "rollout: disabled heads are not 2 layers x 2 heads like the trace");
    CHECK(error_of([] {
              HeadMask ragged({{false, false}, {false}});
          }) == "disabled heads: layer 1 has 1 flags, layer 0 has 2");
    CHECK(error_of([] { attention_rollout(ModelTrace{}, RolloutOptions{}); }) ==
          "rollout: the trace has no attention maps");
    CHECK(error_of([] { attention_rollout(trace_of({{Matrix::Zero(2, 3)}}), RolloutOptions{}); }) ==
          "rollout: layer 0 head 0 has a [2, 3] map, expected [2, 2] (self-attention)");
}

TEST_CASE("analysis: head fusion names round-trip") {
    for (const HeadFusion f : {HeadFusion::mean, HeadFusion::max, HeadFusion::min})
        CHECK(head_fusion_from_name(head_fusion_name(f)) == f);
    CHECK(head_fusion_name(HeadFusion::max) == "max");
    CHECK_FALSE(head_fusion_from_name("sum").has_value());
}

// ------------------------------------------------------------------------ DINO masks

TEST_CASE("analysis: keep_mass keeps the largest weights holding the mass") {
    RowVector w(4);
    w << 0.1f, 0.4f, 0.2f, 0.3f;
    // Ascending 0.1 0.2 0.3 0.4, cumulative 0.1 0.3 0.6 1.0; kept where > 1 - mass.
    CHECK(keep_mass(w, 0.6) == std::vector<bool>{false, true, false, true});   // > 0.4
    CHECK(keep_mass(w, 0.75) == std::vector<bool>{false, true, true, true});   // > 0.25
    CHECK(keep_mass(w, 0.0) == std::vector<bool>{false, false, false, false});
    // Any non-negative scale: renormalised.
    RowVector scaled = w * 10.0f;
    CHECK(keep_mass(scaled, 0.6) == std::vector<bool>{false, true, false, true});
    // mass 1 keeps every non-zero weight; zeros never hold mass.
    RowVector zeros(3);
    zeros << 0.0f, 1.0f, 1.0f;
    CHECK(keep_mass(zeros, 1.0) == std::vector<bool>{false, true, true});
    // Equal weights: the later index is later in the ascending order, so kept first.
    RowVector tied(2);
    tied << 0.5f, 0.5f;
    CHECK(keep_mass(tied, 0.5) == std::vector<bool>{false, true});
    CHECK(keep_mass(RowVector::Zero(3), 0.6) == std::vector<bool>{false, false, false});
    CHECK(error_of([&] { keep_mass(w, 1.5); }) == "keep mass: 1.5 is outside [0, 1]");
}

TEST_CASE("analysis: contours of one cell are its 4 edges, shared edges are not drawn") {
    std::vector<bool> one(9, false);
    one[4] = true;   // the centre of 3 x 3
    const auto edges = mask_contours(one, 3, 3);
    REQUIRE(edges.size() == 4);
    std::set<std::tuple<float, float, float, float>> got;
    for (const GridSegment& s : edges) got.insert({s.x0, s.y0, s.x1, s.y1});
    const std::set<std::tuple<float, float, float, float>> square = {
        {1, 1, 2, 1}, {2, 1, 2, 2}, {1, 2, 2, 2}, {1, 1, 1, 2}};
    CHECK(got == square);
    // Two cells side by side: 6 edges, the one between them not drawn.
    std::vector<bool> pair(6, false);
    pair[0] = pair[1] = true;   // 3 x 2 grid, top-left two
    const auto outline = mask_contours(pair, 3, 2);
    CHECK(outline.size() == 6);
    for (const GridSegment& s : outline) CHECK_FALSE((s.x0 == 1.0f && s.x1 == 1.0f));
    CHECK(mask_contours(std::vector<bool>(6, false), 3, 2).empty());
    CHECK(mask_contours(std::vector<bool>(4, true), 2, 2).size() == 8);
    CHECK(error_of([] { mask_contours(std::vector<bool>(5, true), 2, 2); }) == "contours: 5 cells for a 2 x 2 grid");
}

// ------------------------------------------------------------------------ head similarity

TEST_CASE("analysis: JS divergence is 0 for identical maps and 1 bit for disjoint rows") {
    std::mt19937 rng(11);
    const Matrix p = random_map(5, rng);
    const Matrix copy = p;
    Matrix shifted = Matrix::Zero(3, 3);   // row i on key i + 1: disjoint from the identity's
    for (Eigen::Index i = 0; i < 3; ++i) shifted(i, (i + 1) % 3) = 1.0f;
    const Matrix d = js_divergence_matrix({&p, &p, &copy});
    CHECK(d(0, 1) == 0.0f);
    CHECK(d(0, 2) <= 1e-12f);
    const Matrix eye = Matrix::Identity(3, 3);
    const Matrix disjoint = js_divergence_matrix({&eye, &shifted});
    CHECK(near(disjoint(0, 1), 1.0));
    CHECK(disjoint(1, 0) == disjoint(0, 1));
    CHECK(disjoint(0, 0) == 0.0f);
    const Matrix other = Matrix::Zero(4, 4);
    CHECK(error_of([&] { js_divergence_matrix({&p, &other}); }) == "head similarity: map 1 is [4, 4], map 0 is [5, 5]");
    CHECK(js_divergence_matrix({}).size() == 0);
}

TEST_CASE("analysis: the JS matrix agrees with compare_heads pair by pair") {
    std::mt19937 rng(12);
    std::vector<Matrix> maps;
    for (int i = 0; i < 5; ++i) maps.push_back(random_map(6, rng));
    maps[3].row(0).setZero();   // a masked row in one map: counted (the other has weight)
    maps[4].row(0).setZero();
    maps[2].row(1) = maps[1].row(1);
    std::vector<const Matrix*> pointers;
    for (const Matrix& m : maps) pointers.push_back(&m);
    const Matrix d = js_divergence_matrix(pointers);
    for (std::size_t a = 0; a < maps.size(); ++a) {
        for (std::size_t b = 0; b < maps.size(); ++b) {
            const double expected = a == b ? 0.0 : compare_heads(maps[a], maps[b]).mean_js_divergence;
            CHECK(near(d(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)), expected));
        }
    }
    // Rows fully masked in both are skipped: maps 3 and 4 compare 5 rows.
    CHECK(compare_heads(maps[3], maps[4]).rows_compared == 5);
    CHECK(compare_heads(maps[0], maps[4]).rows_compared == 6);
}

TEST_CASE("analysis: the JS matrix reports progress and stops when cancelled") {
    std::mt19937 rng(13);
    std::vector<Matrix> maps;
    for (int i = 0; i < 4; ++i) maps.push_back(random_map(3, rng));
    std::vector<const Matrix*> pointers;
    for (const Matrix& m : maps) pointers.push_back(&m);
    std::vector<double> fractions;
    LoadControl control;
    control.on_progress = [&](double f) { fractions.push_back(f); };
    js_divergence_matrix(pointers, control);
    REQUIRE(fractions.size() >= 2);
    CHECK(fractions.front() == 0.0);
    CHECK(fractions.back() == 1.0);
    for (std::size_t i = 1; i < fractions.size(); ++i) CHECK(fractions[i] >= fractions[i - 1]);
    std::atomic<bool> cancel{true};
    LoadControl stop;
    stop.cancel = &cancel;
    CHECK_THROWS_AS(js_divergence_matrix(pointers, stop), LoadCancelled);
}

TEST_CASE("analysis: average linkage keeps an obvious 2-block structure contiguous") {
    // Points 0, 2, 4 close together (0.1), 1, 3, 5 close together, the blocks 1 apart.
    Matrix d(6, 6);
    for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) d(i, j) = i == j ? 0.0f : (i % 2 == j % 2 ? 0.1f : 1.0f);
    }
    // Equal distances merge the lowest indices first; a merged cluster lists its lower
    // index's part first.
    CHECK(average_linkage_order(d) == std::vector<int>{0, 2, 4, 1, 3, 5});
    // Size-weighted averages: 3 is 0.2 from 0, 0.3 from 1; 0 and 1 merge first (0.1),
    // then 3 joins at (0.2 + 0.3) / 2 = 0.25 < 2 (from 2).
    Matrix e(4, 4);
    e << 0.0f, 0.1f, 2.0f, 0.2f, 0.1f, 0.0f, 2.0f, 0.3f, 2.0f, 2.0f, 0.0f, 2.0f, 0.2f, 0.3f, 2.0f, 0.0f;
    CHECK(average_linkage_order(e) == std::vector<int>{0, 1, 3, 2});
    CHECK(average_linkage_order(Matrix(0, 0)).empty());
    CHECK(average_linkage_order(Matrix::Zero(1, 1)) == std::vector<int>{0});
    CHECK(error_of([] { average_linkage_order(Matrix::Zero(2, 3)); }) ==
          "clustering: the distance matrix is [2, 3], not square");
}

TEST_CASE("analysis: classical MDS of points on a line recovers their distances") {
    const std::vector<float> x = {0.0f, 1.0f, 3.0f, 7.0f};
    Matrix d(4, 4);
    for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) d(i, j) = std::abs(x[static_cast<std::size_t>(i)] - x[static_cast<std::size_t>(j)]);
    }
    const Matrix c = classical_mds(d);
    REQUIRE(c.rows() == 4);
    REQUIRE(c.cols() == 2);
    for (int i = 0; i < 4; ++i) {
        CHECK(near(c(i, 1), 0.0, 1e-5));   // one dimension is enough
        for (int j = 0; j < 4; ++j) CHECK(near(std::abs(c(i, 0) - c(j, 0)), d(i, j), 1e-5));
    }
    // The axis is x - mean(x) up to sign; the largest coordinate is made positive: 7 - 2.75.
    CHECK(near(c(3, 0), 4.25, 1e-5));
    CHECK(error_of([&] { classical_mds(d, 0); }) == "MDS: 0 dimensions asked for, at least 1 needed");
    CHECK(classical_mds(Matrix(0, 0)).rows() == 0);
}

TEST_CASE("analysis: head similarity lists the heads not left out, layer-major") {
    std::mt19937 rng(14);
    const ModelTrace trace =
        trace_of({{random_map(4, rng), random_map(4, rng)}, {random_map(4, rng), random_map(4, rng)}});
    const HeadSimilarity all = head_similarity(trace);
    REQUIRE(all.heads.size() == 4);
    CHECK(all.heads[2] == std::pair<int, int>{1, 0});
    CHECK(all.divergence.rows() == 4);
    CHECK(all.order.size() == 4);
    CHECK(all.mds.rows() == 4);
    const HeadSimilarity some = head_similarity(trace, {{false, true}, {true, false}});   // 0.1 and 1.0 left out
    REQUIRE(some.heads.size() == 2);
    CHECK(some.heads[1] == std::pair<int, int>{1, 1});
    CHECK(near(some.divergence(0, 1), all.divergence(0, 3)));
    CHECK(error_of([&] {
              head_similarity(trace, {{true, false}});
          }) == "head similarity: the heads to leave out are not shaped [layers][heads] like the trace");
}

// ------------------------------------------------------------------------ golden files

namespace {

struct AnalysisGolden {
    std::string name;
    nlohmann::json json;
    ModelTrace trace;
    MetricContext context;
};

AnalysisGolden load_golden(const std::string& name) {
    const std::string path = test::golden_dir() + "/analysis/" + name + ".json";
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "missing " << path << " (run tools/analysis_reference.py)");
    AnalysisGolden g;
    g.name = name;
    g.json = nlohmann::json::parse(in);
    const auto L = g.json.at("n_layers").get<int>(), H = g.json.at("n_heads").get<int>();
    const auto T = g.json.at("T").get<Eigen::Index>();
    std::vector<std::vector<Matrix>> layers;
    for (int l = 0; l < L; ++l) {
        layers.emplace_back();
        for (int h = 0; h < H; ++h) {
            const auto& rows = g.json.at("weights").at(l).at(h);
            REQUIRE(rows.size() == static_cast<std::size_t>(T));
            Matrix w(T, T);
            for (Eigen::Index i = 0; i < T; ++i) {
                for (Eigen::Index j = 0; j < T; ++j) w(i, j) = rows.at(i).at(j).get<float>();
            }
            layers.back().push_back(w);
        }
    }
    OptionalMask mask;
    if (!g.json.at("mask").is_null()) {
        Mask m(T, T);
        for (Eigen::Index i = 0; i < T; ++i) {
            for (Eigen::Index j = 0; j < T; ++j) m(i, j) = g.json.at("mask").at(i).at(j).get<bool>();
        }
        mask = m;
    }
    g.trace = trace_of(layers, mask);
    g.context.ids = g.json.at("ids").get<std::vector<std::int64_t>>();
    g.context.special = g.json.at("special").get<std::vector<bool>>();
    g.context.grid_width = g.json.at("grid_width").get<int>();
    g.context.grid_height = g.json.at("grid_height").get<int>();
    g.context.n_prefix_tokens = g.json.at("n_prefix_tokens").get<int>();
    g.context.patch_pixels = g.json.at("patch_pixels").get<double>();
    g.context.top_k = g.json.at("top_k").get<int>();
    return g;
}

Matrix matrix_of(const nlohmann::json& rows) {
    Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.at(0).size()));
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) = rows.at(i).at(j).get<float>();
    }
    return m;
}

const std::vector<std::string> golden_names = {"text_cls", "causal_left_pad", "image_grid"};

}   // namespace

TEST_CASE("analysis golden: head metrics match the NumPy reference") {
    for (const std::string& name : golden_names) {
        const AnalysisGolden g = load_golden(name);
        const auto metrics = compute_model_metrics(g.trace, g.context);
        const auto& expected = g.json.at("metrics");
        REQUIRE(metrics.size() == expected.size());
        for (std::size_t k = 0; k < metrics.size(); ++k) {
            CHECK(metrics[k].layer == expected[k].at("layer").get<int>());
            CHECK(metrics[k].head == expected[k].at("head").get<int>());
            for (int i = 0; i < metric_count; ++i) {
                const auto metric = static_cast<Metric>(i);
                const auto actual = metric_value(metrics[k], metric);
                const auto& want = expected[k].at(std::string(metric_name(metric)));
                if (want.is_null()) {
                    CHECK_MESSAGE(!actual.has_value(), name << " head " << k << " " << metric_name(metric));
                } else {
                    REQUIRE_MESSAGE(actual.has_value(), name << " head " << k << " " << metric_name(metric));
                    CHECK_MESSAGE(golden_near(*actual, want.get<double>()),
                                  name << " head " << k << " " << metric_name(metric) << ": " << *actual << " vs "
                                       << want.get<double>());
                }
            }
        }
    }
}

TEST_CASE("analysis golden: cross-attention metrics match the NumPy reference") {
    const std::string path = test::golden_dir() + "/analysis/cross_attention.json";
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "missing " << path << " (run tools/analysis_reference.py)");
    const nlohmann::json g = nlohmann::json::parse(in);
    const auto special = g.at("special").get<std::vector<bool>>();
    const int top_k = g.at("top_k").get<int>();
    for (int h = 0; h < g.at("n_heads").get<int>(); ++h) {
        const HeadMetrics m = compute_cross_metrics(matrix_of(g.at("weights").at(h)), special, top_k);
        CHECK_FALSE(measured_role(m, false).has_value());   // self-attention's roles name no cross head
        for (int i = 0; i < metric_count; ++i) {
            const auto metric = static_cast<Metric>(i);
            const auto actual = metric_value(m, metric);
            const auto& want = g.at("metrics").at(h).at(std::string(metric_name(metric)));
            if (want.is_null()) {
                CHECK_MESSAGE(!actual.has_value(), "head " << h << " " << metric_name(metric));
            } else {
                REQUIRE_MESSAGE(actual.has_value(), "head " << h << " " << metric_name(metric));
                CHECK_MESSAGE(golden_near(*actual, want.get<double>()),
                              "head " << h << " " << metric_name(metric) << ": " << *actual << " vs " << want);
            }
        }
    }
}

TEST_CASE("cross metrics: monotonicity counts the steps whose centre over the source moves forward") {
    // Centres 0, 1.5, 1, 3: two of three steps go forward.
    Matrix w(4, 4);
    w << 1, 0, 0, 0,      //
        0, 0.5, 0.5, 0,   //
        0, 1, 0, 0,       //
        0, 0, 0, 1;
    const HeadMetrics m = compute_cross_metrics(w, {});
    REQUIRE(m.monotonicity.has_value());
    CHECK(*m.monotonicity == doctest::Approx(2.0 / 3.0));
    CHECK(m.sink_mass == doctest::Approx(0.25));
    CHECK(m.max_weight == doctest::Approx((1 + 0.5 + 1 + 1) / 4.0));
    // One target token: no step to judge.
    CHECK_FALSE(compute_cross_metrics(Matrix::Constant(1, 3, 1.0f / 3.0f), {}).monotonicity.has_value());
    // Self-attention has no monotonicity; cross-attention no position metrics.
    CHECK_FALSE(metric_value(compute_head_metrics(uniform(3), nullptr, {}), Metric::monotonicity).has_value());
    CHECK_FALSE(metric_value(m, Metric::diag).has_value());
    CHECK(error_of([&] { compute_cross_metrics(w, {true}); }) == "metrics: 1 special-token flags for a map of 4 keys");
}

TEST_CASE("analysis golden: rollout matches the NumPy reference for every fusion and option") {
    for (const std::string& name : golden_names) {
        const AnalysisGolden g = load_golden(name);
        for (const auto& r : g.json.at("rollout")) {
            RolloutOptions options;
            options.fusion = *head_fusion_from_name(r.at("fusion").get<std::string>());
            options.discard_ratio = r.at("discard_ratio").get<double>();
            options.start_layer = r.at("start_layer").get<int>();
            options.end_layer = r.at("end_layer").get<int>();
            options.disabled_heads = r.at("disabled_heads").get<std::vector<std::vector<bool>>>();
            const Matrix actual = attention_rollout(g.trace, options);
            const Matrix expected = matrix_of(r.at("result"));
            REQUIRE(actual.rows() == expected.rows());
            double worst = 0.0;
            for (Eigen::Index i = 0; i < actual.size(); ++i) {
                const double a = actual.data()[i], e = expected.data()[i];
                if (!golden_near(a, e)) worst = std::max(worst, std::abs(a - e));
            }
            CHECK_MESSAGE(worst == 0.0, name << " " << r.at("fusion").get<std::string>() << " discard "
                                             << options.discard_ratio << ": off by " << worst);
        }
    }
}

TEST_CASE("analysis golden: JS matrix, clustering order and MDS match the NumPy reference") {
    for (const std::string& name : golden_names) {
        const AnalysisGolden g = load_golden(name);
        const Matrix expected = matrix_of(g.json.at("js"));
        const HeadSimilarity s = head_similarity(g.trace);
        REQUIRE(s.divergence.rows() == expected.rows());
        for (Eigen::Index i = 0; i < expected.size(); ++i) {
            CHECK_MESSAGE(golden_near(s.divergence.data()[i], expected.data()[i]),
                          name << " js entry " << i << ": " << s.divergence.data()[i] << " vs " << expected.data()[i]);
        }
        // Order and MDS from the reference's own (float32) matrix, so they test only themselves.
        CHECK(average_linkage_order(expected) == g.json.at("order").get<std::vector<int>>());
        const Matrix mds = classical_mds(expected);
        const Matrix want = matrix_of(g.json.at("mds"));
        REQUIRE(mds.rows() == want.rows());
        for (Eigen::Index axis = 0; axis < 2; ++axis) {
            const float sign = mds.col(axis).dot(want.col(axis)) < 0.0f ? -1.0f : 1.0f;
            for (Eigen::Index i = 0; i < mds.rows(); ++i) {
                CHECK_MESSAGE(golden_near(sign * mds(i, axis), want(i, axis)), name << " mds " << i << "," << axis
                                                                                    << ": " << sign * mds(i, axis)
                                                                                    << " vs " << want(i, axis));
            }
        }
    }
}

TEST_CASE("head roles: a head is named by the metric that passes its threshold by the widest margin") {
    HeadMetrics m;
    CHECK_FALSE(measured_role(m, false).has_value());   // all zero: nothing to name
    m.prev_token = 0.49;
    CHECK_FALSE(measured_role(m, false).has_value());   // under 0.5
    m.prev_token = 0.9;
    REQUIRE(measured_role(m, false).has_value());
    CHECK(measured_role(m, false)->name == "previous token");
    CHECK(measured_role(m, false)->metric == Metric::prev_token);
    CHECK(measured_role(m, false)->score == doctest::Approx(0.9));
    m.induction = 0.8;   // 0.8 / 0.4 = 2 beats 0.9 / 0.5 = 1.8
    CHECK(measured_role(m, false)->name == "induction");
    m.induction.reset();
    m.sink_mass = 0.99;   // 0.99 / 0.6 = 1.65 loses to 1.8
    CHECK(measured_role(m, false)->name == "previous token");
    m.prev_token = 0.0;
    CHECK(measured_role(m, false)->name == "first token");
    CHECK(measured_role(m, true)->name == "[CLS]");
    m.diag = 0.95;   // 1.9 beats 1.65
    CHECK(measured_role(m, true)->name == "current token");
}
