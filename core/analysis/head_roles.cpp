#include "core/analysis/head_roles.h"

namespace headscope {

std::optional<MeasuredRole> measured_role(const HeadMetrics& m, bool images) {
    // The roles are self-attention's: a cross-attention head reads another sequence.
    if (m.cross) return std::nullopt;
    struct Rule {
        const char* name;
        Metric metric;
        std::optional<double> score;
        double threshold;
    };
    // Thresholds well above what an unstructured head reaches: a uniform causal head
    // over T tokens scores about ln(T)/T on prev_token and diag, and 1/(j+1) on induction.
    const Rule rules[] = {
        {"induction", Metric::induction, m.induction, 0.4},
        {"previous token", Metric::prev_token, m.prev_token, 0.5},
        {"current token", Metric::diag, m.diag, 0.5},
        {images ? "[CLS]" : "first token", Metric::sink_mass, m.sink_mass, 0.6},
    };
    std::optional<MeasuredRole> best;
    double best_ratio = 1.0;
    for (const Rule& r : rules) {
        if (!r.score || *r.score / r.threshold < best_ratio) continue;
        best_ratio = *r.score / r.threshold;
        best = MeasuredRole{r.name, r.metric, *r.score};
    }
    return best;
}

}   // namespace headscope
