// Resuming a forward at a layer, the output-change measures, the head-importance scan
// (against single ablations run one by one, from scratch), the analyze report's JSON
// and CSV, and what the demo models' built heads score on their metrics.

#include "core/analysis/ablation_effects.h"
#include "core/analysis/analysis_report.h"
#include "core/analysis/head_metrics.h"
#include "core/models/toy/toy_models.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>

using namespace headscope;

namespace {

std::vector<std::vector<bool>> one_disabled(const ModelInfo& info, Eigen::Index layer, Eigen::Index head) {
    std::vector<std::vector<bool>> flags(static_cast<std::size_t>(info.n_layers),
                                         std::vector<bool>(static_cast<std::size_t>(info.n_heads), false));
    flags[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)] = true;
    return flags;
}

float max_difference(const Matrix& a, const Matrix& b) {
    REQUIRE(a.rows() == b.rows());
    REQUIRE(a.cols() == b.cols());
    return a.size() == 0 ? 0.0f : (a - b).cwiseAbs().maxCoeff();
}

// The index (into compute_model_metrics' layer-major list) of the head whose role
// starts with `role`, or -1.
int head_with_role(const ModelInfo& info, const std::string& role) {
    for (Eigen::Index l = 0; l < info.n_layers; ++l) {
        for (Eigen::Index h = 0; h < info.n_heads; ++h) {
            if (info.head_roles[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)].rfind(role, 0) == 0) {
                return static_cast<int>(l * info.n_heads + h);
            }
        }
    }
    return -1;
}

int argmax(const std::vector<HeadMetrics>& metrics, Metric metric) {
    int best = -1;
    double best_value = -INFINITY;
    for (std::size_t n = 0; n < metrics.size(); ++n) {
        const double v = metric_value(metrics[n], metric).value_or(-INFINITY);
        if (v > best_value) {
            best_value = v;
            best = static_cast<int>(n);
        }
    }
    return best;
}

// The built demo text model with three layers: a first, a middle and a last.
std::unique_ptr<Model> three_layer_demo() {
    ToyConfig config;
    config.n_layers = 3;
    return make_toy_text(config);
}

}   // namespace

TEST_CASE("resume: a run resumed at layer l equals the run from scratch, for every l") {
    const auto model = three_layer_demo();
    const ModelInput input = model->encode_text("the cat sat on the mat and the dog sat on the log");
    RunOptions keep;
    keep.keep_layer_inputs = true;
    const ModelTrace base = model->forward(input, keep);
    REQUIRE(base.layer_inputs.size() == 3);
    CHECK(max_difference(base.layer_inputs[0], input.embeddings) == 0.0f);
    for (Eigen::Index l = 0; l < 3; ++l) {
        CAPTURE(l);
        RunOptions fresh;
        fresh.disabled_heads = one_disabled(model->info(), l, 1);
        const ModelTrace expected = model->forward(input, fresh);
        RunOptions resumed = fresh;
        resumed.resume_from = &base;
        resumed.resume_layer = l;
        const ModelTrace got = model->forward(input, resumed);
        REQUIRE(got.layers.size() == 3);
        CHECK(max_difference(got.hidden, expected.hidden) == 0.0f);
        for (std::size_t k = 0; k < 3; ++k) {
            CHECK(max_difference(got.layers[k].heads[2].weights, expected.layers[k].heads[2].weights) == 0.0f);
        }
    }
}

TEST_CASE("resume: refused in one line when the run to resume from does not fit") {
    const auto model = make_toy_text(ToyConfig{});
    const ModelInput input = model->encode_text("a b c");
    const ModelTrace without_inputs = model->forward(input, RunOptions{});
    RunOptions options;
    options.resume_from = &without_inputs;
    options.resume_layer = 1;
    CHECK_THROWS_WITH_AS(model->forward(input, options), doctest::Contains("did not keep every layer's input"), Error);
    RunOptions keep;
    keep.keep_layer_inputs = true;
    const ModelTrace base = model->forward(input, keep);
    options.resume_from = &base;
    options.resume_layer = 2;
    CHECK_THROWS_WITH_AS(model->forward(input, options), doctest::Contains("cannot resume at layer 2"), Error);
    options.resume_layer = 0;
    const ModelInput longer = model->encode_text("a b c d");
    CHECK_THROWS_WITH_AS(model->forward(longer, options), doctest::Contains("did not keep"), Error);
    options.causal = true;   // the kept run had no mask
    CHECK_THROWS_WITH_AS(model->forward(input, options), doctest::Contains("another attention mask"), Error);
    options.causal.reset();
    options.resume_layer = 1;
    options.stages_layer = 0;   // layer 0 would be copied, but the kept run has its maps only
    CHECK_THROWS_WITH_AS(model->forward(input, options), doctest::Contains("another detail at layer 0"), Error);
}

TEST_CASE("stages layer: that layer keeps every stage, equal to an all-stages run, the others keep their maps only") {
    const auto model = three_layer_demo();
    const ModelInput input = model->encode_text("the cat sat on the mat");
    RunOptions all;
    all.detail = TraceDetail::all_stages;
    all.causal = true;
    const ModelTrace expected = model->forward(input, all);
    RunOptions one;
    one.causal = true;
    one.stages_layer = 1;
    const ModelTrace got = model->forward(input, one);
    REQUIRE(got.layers.size() == 3);
    CHECK(max_difference(got.hidden, expected.hidden) == 0.0f);
    for (std::size_t l = 0; l < 3; ++l) {
        CAPTURE(l);
        CHECK(detail_of(got.layers[l]) == (l == 1 ? TraceDetail::all_stages : TraceDetail::weights));
        CHECK(got.layers[l].input.size() == (l == 1 ? expected.layers[l].input.size() : 0));
        for (std::size_t h = 0; h < got.layers[l].heads.size(); ++h) {
            const HeadTrace& a = got.layers[l].heads[h];
            const HeadTrace& b = expected.layers[l].heads[h];
            CHECK(max_difference(a.weights, b.weights) == 0.0f);
            if (l != 1) continue;
            CHECK(max_difference(a.q, b.q) == 0.0f);
            CHECK(max_difference(a.scores, b.scores) == 0.0f);
            CHECK((a.masked.array().isInf() == b.masked.array().isInf()).all());
            CHECK(max_difference(a.context, b.context) == 0.0f);
        }
    }
}

TEST_CASE("output change: KL divergence and relative change by hand") {
    // p = softmax(0, 0) = (1/2, 1/2); q = softmax(ln 3, 0) = (3/4, 1/4).
    Matrix p(1, 2);
    p << 0.0f, 0.0f;
    Matrix q(1, 2);
    q << std::log(3.0f), 0.0f;
    const double expected = 0.5 * std::log(0.5 / 0.75) + 0.5 * std::log(0.5 / 0.25);
    CHECK(mean_kl_divergence(p, q) == doctest::Approx(expected).epsilon(1e-6));
    CHECK(mean_kl_divergence(p, p) == 0.0);
    // Two rows: the mean.
    Matrix p2(2, 2);
    p2 << 0.0f, 0.0f, 5.0f, 5.0f;
    Matrix q2(2, 2);
    q2 << std::log(3.0f), 0.0f, 1.0f, 1.0f;
    CHECK(mean_kl_divergence(p2, q2) == doctest::Approx(expected / 2).epsilon(1e-6));
    CHECK_THROWS_AS(mean_kl_divergence(p, p2), Error);
    // Labels scored each by a sigmoid: each label's yes-or-no KL, averaged. Logits 0 and ln 3
    // against ln 3 and ln 3: Bernoulli(1/2) || Bernoulli(3/4), and 0.
    const double bernoulli = 0.5 * std::log(0.5 / 0.75) + 0.5 * std::log(0.5 / 0.25);
    Matrix s(1, 2);
    s << 0.0f, std::log(3.0f);
    Matrix t(1, 2);
    t << std::log(3.0f), std::log(3.0f);
    CHECK(mean_kl_divergence(s, t, LabelScore::sigmoid) == doctest::Approx(bernoulli / 2).epsilon(1e-6));
    CHECK(mean_kl_divergence(s, s, LabelScore::sigmoid) == 0.0);
    // Far in the tails the probabilities round to 0 and 1 in float; the KL stays finite.
    Matrix far(1, 1);
    far << -40.0f;
    Matrix near(1, 1);
    near << -20.0f;
    CHECK(std::isfinite(mean_kl_divergence(far, near, LabelScore::sigmoid)));
    CHECK(mean_kl_divergence(far, near, LabelScore::sigmoid) > 0.0);

    Matrix a(1, 2);
    a << 3.0f, 4.0f;
    Matrix b(1, 2);
    b << 3.0f, 5.0f;
    CHECK(relative_change(a, b) == doctest::Approx(0.2));
    CHECK(relative_change(a, a) == 0.0);
}

TEST_CASE("output change: KL over a 50k vocabulary equals the definition in double") {
    // Logits spread as a language model's (tens of units), q a small change of p.
    Matrix p(3, 50257);
    Matrix q(3, 50257);
    for (Eigen::Index i = 0; i < p.size(); ++i) {
        p.data()[i] = 12.0f * std::sin(0.37f * static_cast<float>(i)) + 0.001f * static_cast<float>(i % 977);
        q.data()[i] = p.data()[i] + 0.05f * std::cos(1.3f * static_cast<float>(i));
    }
    double expected = 0.0;
    for (Eigen::Index r = 0; r < p.rows(); ++r) {
        const Eigen::ArrayXd zp = p.row(r).transpose().cast<double>().array();
        const Eigen::ArrayXd zq = q.row(r).transpose().cast<double>().array();
        const Eigen::ArrayXd log_p = zp - (zp.maxCoeff() + std::log((zp - zp.maxCoeff()).exp().sum()));
        const Eigen::ArrayXd log_q = zq - (zq.maxCoeff() + std::log((zq - zq.maxCoeff()).exp().sum()));
        expected += (log_p.exp() * (log_p - log_q)).sum();
    }
    expected /= static_cast<double>(p.rows());
    REQUIRE(expected > 1e-4);
    CHECK(mean_kl_divergence(p, q) == doctest::Approx(expected).epsilon(1e-5));
    CHECK(mean_kl_divergence(p, p) == 0.0);
}

TEST_CASE("importance scan: equals each head disabled alone, run from scratch (demo model, relative change)") {
    const auto model = three_layer_demo();
    const ModelInput input = model->encode_text("one two three one two three four");
    RunOptions options;
    options.causal = true;
    const ImportanceScan scan = importance_scan(*model, input, options);
    CHECK(scan.measure == EffectMeasure::relative_change);
    REQUIRE(scan.effect.rows() == 3);
    REQUIRE(scan.effect.cols() == 4);
    const ModelTrace intact = model->forward(input, options);
    for (Eigen::Index l = 0; l < 3; ++l) {
        for (Eigen::Index h = 0; h < 4; ++h) {
            RunOptions ablated = options;
            ablated.disabled_heads = one_disabled(model->info(), l, h);
            const double expected = relative_change(intact.hidden, model->forward(input, ablated).hidden);
            CAPTURE(l);
            CAPTURE(h);
            CHECK(scan.effect(l, h) == doctest::Approx(expected).epsilon(1e-6));
            CHECK(scan.effect(l, h) > 0.0f);
        }
    }
}

TEST_CASE("importance scan: reports progress to 1 and stops when cancelled") {
    const auto model = make_toy_text(ToyConfig{});
    const ModelInput input = model->encode_text("a b c d");
    std::vector<double> seen;
    LoadControl control;
    control.on_progress = [&](double f) { seen.push_back(f); };
    importance_scan(*model, input, RunOptions{}, control);
    REQUIRE(seen.size() == 9);   // before each of the 8 heads, and 1 at the end
    CHECK(seen.front() == 0.0);
    CHECK(seen.back() == 1.0);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    std::atomic<bool> stop{true};
    control.cancel = &stop;
    CHECK_THROWS_AS(importance_scan(*model, input, RunOptions{}, control), LoadCancelled);
}

TEST_CASE("demo model: its built heads are found by their metrics") {
    const auto model = make_toy_text(ToyConfig{});
    const ModelInfo& info = model->info();
    const ModelInput input = model->encode_text("The cat sat on the mat because the cat was tired .");
    const ModelTrace trace = model->forward(input, RunOptions{});
    const std::vector<HeadMetrics> metrics = compute_model_metrics(trace, metric_context(input, info));
    REQUIRE(metrics.size() == static_cast<std::size_t>(info.n_layers * info.n_heads));
    const int previous = head_with_role(info, "previous token");
    const int first = head_with_role(info, "first token");
    REQUIRE(previous >= 0);
    REQUIRE(first >= 0);
    CHECK(argmax(metrics, Metric::prev_token) == previous);
    CHECK(metric_value(metrics[static_cast<std::size_t>(previous)], Metric::prev_token).value() > 0.8);
    CHECK(argmax(metrics, Metric::sink_mass) == first);
    CHECK(metric_value(metrics[static_cast<std::size_t>(first)], Metric::sink_mass).value() > 0.7);
}

TEST_CASE("analysis report: JSON carries the defined fields per head, CSV one row per head") {
    const auto model = make_toy_text(ToyConfig{});
    const ModelInfo& info = model->info();
    const ModelInput input = model->encode_text("a b a b");
    const ModelTrace trace = model->forward(input, RunOptions{});
    AnalysisReport report;
    report.model = info.name;
    report.tokens = input.labels;
    report.n_layers = info.n_layers;
    report.n_heads = info.n_heads;
    report.metrics = compute_model_metrics(trace, metric_context(input, info));
    report.importance = importance_scan(*model, input, RunOptions{});

    const auto json = nlohmann::json::parse(analysis_json(report));
    REQUIRE(json["heads"].size() == 8);
    for (const char* field : {"layer", "head", "entropy", "entropy_norm", "mean_distance", "max_weight", "sink_mass",
                              "diag", "prev_token", "induction", "monotonicity"}) {
        CAPTURE(field);
        CHECK(json["heads"][5].contains(field));
    }
    CHECK(json["heads"][5]["layer"] == 1);
    CHECK(json["heads"][5]["head"] == 1);
    CHECK(json["heads"][5]["induction"].is_number());    // "a b a b" repeats
    CHECK(json["heads"][5]["monotonicity"].is_null());   // self-attention's maps have none
    CHECK(json["importance"]["measure"] == "relative_change");
    CHECK(json["importance"]["heads"].size() == 8);
    CHECK_FALSE(json.contains("rollout"));

    const std::string csv = analysis_csv(report);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 9);
    CHECK(csv.rfind("layer,head,entropy,entropy_norm,mean_distance,max_weight,top_k_mass,sink_mass,special_mass,diag,"
                    "prev_token,induction,monotonicity,importance_relative_change\n",
                    0) == 0);
    report.rollout = RolloutResult{};
    CHECK_THROWS_WITH_AS(analysis_csv(report), doctest::Contains(".json"), Error);
}
