#include "core/analysis/ablation_effects.h"

#include "core/base/error.h"
#include "core/tensor/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace headscope {

namespace {

std::string shape_text(const Matrix& m) {
    // append, not "literal" + std::string: GCC 12 warns falsely (-Wrestrict) on the latter.
    std::string text("[");
    text.append(std::to_string(m.rows())).append(", ").append(std::to_string(m.cols())).append("]");
    return text;
}

void check_same_shape(const Matrix& a, const Matrix& b, const char* what) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) {
        throw Error(std::string(what) + ": shapes " + shape_text(a) + " and " + shape_text(b) + " differ");
    }
}

// The sum of `values` in double, from float sums of 64 at a time: each short sum is
// vectorised (a cast to double inside an Eigen expression is not) and exact to a few
// float ulps, and the long sum over a 50k vocabulary keeps double's precision.
double sum_in_double(const Eigen::ArrayXf& values) {
    constexpr Eigen::Index block = 64;
    const Eigen::Index n = values.size();
    double total = 0.0;
    Eigen::Index j = 0;
    for (; j + block <= n; j += block) total += static_cast<double>(values.segment(j, block).sum());
    if (j < n) total += static_cast<double>(values.segment(j, n - j).sum());
    return total;
}

// KL(softmax(p) || softmax(q)) of one row of logits, as
//   sum_j p_j (z_p,j - z_q,j) - lse(z_p) + lse(z_q),
// with two exponentials per logit, in float, and the long sums in double: a 50k
// vocabulary spans enough range that a float sum would lose the small probabilities KL
// weighs. Identical rows give exactly 0. `ep`, `scratch`: buffers of the row's size,
// reused from row to row (a fresh 200 KB block per row is a page-faulting mmap each).
double row_kl_divergence(const Eigen::Ref<const RowVector>& p_logits, const Eigen::Ref<const RowVector>& q_logits,
                         Eigen::ArrayXf& ep, Eigen::ArrayXf& scratch) {
    const auto zp = p_logits.array().transpose();
    const auto zq = q_logits.array().transpose();
    const float top_p = zp.maxCoeff();
    const float top_q = zq.maxCoeff();
    ep = (zp - top_p).exp();
    const double sum_p = sum_in_double(ep);
    scratch = (zq - top_q).exp();
    const double sum_q = sum_in_double(scratch);
    scratch = ep * (zp - zq);
    const double expected_gap = sum_in_double(scratch) / sum_p;
    return expected_gap - (static_cast<double>(top_p) + std::log(sum_p)) +
           (static_cast<double>(top_q) + std::log(sum_q));
}

// log(1 + e^x) without overflow.
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// KL(Bernoulli(sigmoid(a)) || Bernoulli(sigmoid(b))), with log sigmoid(x) = -softplus(-x) and
// log(1 - sigmoid(x)) = -softplus(x): exact where the probabilities round to 0 or 1.
double bernoulli_kl(double a, double b) {
    const double p = 1.0 / (1.0 + std::exp(-a));
    return p * (softplus(-b) - softplus(-a)) + (1.0 - p) * (softplus(b) - softplus(a));
}

}   // namespace

std::string_view effect_measure_name(EffectMeasure measure) {
    return measure == EffectMeasure::kl_divergence ? "kl_divergence" : "relative_change";
}

double mean_kl_divergence(const Matrix& p_logits, const Matrix& q_logits, LabelScore score) {
    check_same_shape(p_logits, q_logits, "KL divergence");
    if (score == LabelScore::sigmoid) {   // a few labels: no threads
        double total = 0.0;
        for (Eigen::Index i = 0; i < p_logits.size(); ++i) {
            total += std::max(0.0, bernoulli_kl(p_logits.data()[i], q_logits.data()[i]));
        }
        return p_logits.size() == 0 ? 0.0 : total / static_cast<double>(p_logits.size());
    }
    const Eigen::Index rows = p_logits.rows();
    if (rows == 0) return 0.0;
    // Rows on every core ([1,000, 50,257] is two log-softmaxes of 50M logits), each row's
    // KL kept and summed in order after: the same total for any number of threads.
    std::vector<double> per_row(static_cast<std::size_t>(rows));
    parallel_ranges(rows, 20.0 * static_cast<double>(p_logits.size()), [&](Eigen::Index begin, Eigen::Index end) {
        Eigen::ArrayXf ep(p_logits.cols());
        Eigen::ArrayXf scratch(p_logits.cols());
        for (Eigen::Index i = begin; i < end; ++i) {
            // Rounding can leave a hair below 0 for near-identical rows; KL is never negative.
            per_row[static_cast<std::size_t>(i)] =
                std::max(0.0, row_kl_divergence(p_logits.row(i), q_logits.row(i), ep, scratch));
        }
    });
    double total = 0.0;
    for (const double kl : per_row) total += kl;
    return total / static_cast<double>(rows);
}

double relative_change(const Matrix& reference, const Matrix& changed) {
    check_same_shape(reference, changed, "relative change");
    const double base = reference.cast<double>().norm();
    const double diff = (changed.cast<double>() - reference.cast<double>()).norm();
    if (base == 0.0) return diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return diff / base;
}

OutputChange output_change(const ModelTrace& intact, const ModelTrace& ablated, LabelScore score) {
    if (intact.logits.size() != 0)
        return {EffectMeasure::kl_divergence, mean_kl_divergence(intact.logits, ablated.logits, score)};
    return {EffectMeasure::relative_change, relative_change(intact.hidden, ablated.hidden)};
}

ImportanceScan importance_scan(const Model& model, const ModelInput& input, const RunOptions& options,
                               const LoadControl& control) {
    const ModelInfo& info = model.info();
    // Every head on: an encoder-decoder's encoder and cross-attention heads too.
    RunOptions intact_options = options;
    intact_options.disabled_heads = {};
    intact_options.disabled_encoder_heads = {};
    intact_options.disabled_cross_heads = {};
    intact_options.resume_from = nullptr;
    intact_options.detail = TraceDetail::weights;
    intact_options.stages_layer = -1;   // the scan compares outputs; no stage is read
    intact_options.keep_layer_inputs = true;
    const ModelTrace intact = model.forward(input, intact_options);

    ImportanceScan scan;
    scan.measure = intact.logits.size() != 0 ? EffectMeasure::kl_divergence : EffectMeasure::relative_change;
    scan.effect = Matrix::Zero(info.n_layers, info.n_heads);
    const double total = static_cast<double>(info.n_layers * info.n_heads);
    RunOptions ablated_options = intact_options;
    ablated_options.detail = TraceDetail::weights;
    ablated_options.stages_layer = -1;
    ablated_options.keep_layer_inputs = false;
    ablated_options.resume_from = &intact;
    ablated_options.disabled_heads = HeadMask(info.n_layers, info.n_heads);
    for (Eigen::Index l = 0; l < info.n_layers; ++l) {
        ablated_options.resume_layer = l;
        for (Eigen::Index h = 0; h < info.n_heads; ++h) {
            control.report(static_cast<double>(l * info.n_heads + h) / total);
            ablated_options.disabled_heads.set(l, h);
            const ModelTrace ablated = model.forward(input, ablated_options);
            ablated_options.disabled_heads.set(l, h, false);
            scan.effect(l, h) = static_cast<float>(output_change(intact, ablated, info.label_score).value);
        }
    }
    control.report(1.0);
    return scan;
}

}   // namespace headscope
