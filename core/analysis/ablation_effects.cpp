#include "core/analysis/ablation_effects.h"

#include "core/base/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

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

// log softmax of one row, in double: logits of a 50k vocabulary span enough range that
// float loses the small probabilities KL weighs.
Eigen::ArrayXd log_softmax(const Eigen::Ref<const RowVector>& logits) {
    const Eigen::ArrayXd z = logits.transpose().cast<double>().array();
    const double top = z.maxCoeff();
    return z - (top + std::log((z - top).exp().sum()));
}

}   // namespace

std::string_view effect_measure_name(EffectMeasure measure) {
    return measure == EffectMeasure::kl_divergence ? "kl_divergence" : "relative_change";
}

double mean_kl_divergence(const Matrix& p_logits, const Matrix& q_logits) {
    check_same_shape(p_logits, q_logits, "KL divergence");
    if (p_logits.rows() == 0) return 0.0;
    double total = 0.0;
    for (Eigen::Index i = 0; i < p_logits.rows(); ++i) {
        const Eigen::ArrayXd log_p = log_softmax(p_logits.row(i));
        const Eigen::ArrayXd log_q = log_softmax(q_logits.row(i));
        // Rounding can leave a hair below 0 for identical rows; KL is never negative.
        total += std::max(0.0, (log_p.exp() * (log_p - log_q)).sum());
    }
    return total / static_cast<double>(p_logits.rows());
}

double relative_change(const Matrix& reference, const Matrix& changed) {
    check_same_shape(reference, changed, "relative change");
    const double base = reference.cast<double>().norm();
    const double diff = (changed.cast<double>() - reference.cast<double>()).norm();
    if (base == 0.0) return diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return diff / base;
}

OutputChange output_change(const ModelTrace& intact, const ModelTrace& ablated) {
    if (intact.logits.size() != 0)
        return {EffectMeasure::kl_divergence, mean_kl_divergence(intact.logits, ablated.logits)};
    return {EffectMeasure::relative_change, relative_change(intact.hidden, ablated.hidden)};
}

ImportanceScan importance_scan(const Model& model, const ModelInput& input, const RunOptions& options,
                               const LoadControl& control) {
    const ModelInfo& info = model.info();
    RunOptions intact_options = options;
    intact_options.disabled_heads = {};
    intact_options.resume_from = nullptr;
    intact_options.detail = TraceDetail::weights;
    intact_options.stages_layer = -1;   // the scan compares outputs; no stage is read
    intact_options.keep_layer_inputs = true;
    const ModelTrace intact = model.forward(input, intact_options);

    ImportanceScan scan;
    scan.measure = intact.logits.size() != 0 ? EffectMeasure::kl_divergence : EffectMeasure::relative_change;
    scan.effect = Matrix::Zero(info.n_layers, info.n_heads);
    const double total = static_cast<double>(info.n_layers * info.n_heads);
    RunOptions ablated_options = options;
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
            scan.effect(l, h) = static_cast<float>(output_change(intact, ablated).value);
        }
    }
    control.report(1.0);
    return scan;
}

}   // namespace headscope
