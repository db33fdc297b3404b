#include "ui/views/metric_widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace headscope::ui {

const char* metric_description(Metric metric) {
    switch (metric) {
    case Metric::entropy: return "mean entropy of the query rows, in nats (high: spread out)";
    case Metric::entropy_norm: return "entropy / ln(allowed keys): 0 = one key, 1 = uniform";
    case Metric::mean_distance:
        return "mean attention distance: tokens for text, pixels between patch centres for images";
    case Metric::max_weight: return "mean of each row's largest weight";
    case Metric::top_k_mass: return "mean mass on each row's 5 largest weights";
    case Metric::sink_mass: return "mean weight on the first token / [CLS] (attention sink)";
    case Metric::special_mass: return "mean mass on special tokens ([CLS], [SEP], ...)";
    case Metric::diag: return "mean weight on itself";
    case Metric::prev_token: return "mean weight on the previous token";
    case Metric::induction: return "mean weight on the token after an earlier copy of this token (repeats only)";
    case Metric::monotonicity:
        return "cross-attention: share of target steps that read the source at or past where the step before read";
    }
    return "";
}

std::string head_name(int layer, int head) {
    std::string s = std::to_string(layer);
    s += '.';
    s += std::to_string(head);
    return s;
}

// The range of a metric over all heads (finite values only); {0, 1} when none.
std::pair<double, double> metric_range(const std::vector<HeadMetrics>& metrics, Metric metric) {
    double low = INFINITY;
    double high = -INFINITY;
    for (const HeadMetrics& m : metrics) {
        if (const auto v = metric_value(m, metric); v && std::isfinite(*v)) {
            low = std::min(low, *v);
            high = std::max(high, *v);
        }
    }
    if (!std::isfinite(low)) return {0.0, 1.0};
    return {low, high};
}

ImU32 colour_of(Colormap map, double t) {
    const Rgba8 c = colormap_lookup(map, static_cast<float>(std::clamp(t, 0.0, 1.0)));
    return IM_COL32(c.r, c.g, c.b, 255);
}

bool combo_metric(const char* label, Metric& metric) {
    bool changed = false;
    if (ImGui::BeginCombo(label, std::string(metric_name(metric)).c_str())) {
        for (int k = 0; k < metric_count; ++k) {
            const auto m = static_cast<Metric>(k);
            if (ImGui::Selectable(std::string(metric_name(m)).c_str(), m == metric)) {
                metric = m;
                changed = true;
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", metric_description(m));
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", metric_description(metric));
    return changed;
}

}   // namespace headscope::ui
