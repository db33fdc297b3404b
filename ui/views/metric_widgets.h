#pragma once
// Pieces the analysis views (Heads, Model, Similarity) share: what a metric means, its
// range over the heads, its colour, and a combo box to choose one.

#include "core/analysis/head_metrics.h"
#include "core/render/colormap.h"

#include <imgui.h>

#include <string>
#include <utility>
#include <vector>

namespace headscope::ui {

inline constexpr ImU32 axis_colour = IM_COL32(150, 150, 150, 255);
inline constexpr ImU32 selected_ring = IM_COL32(255, 255, 255, 255);

// One line on what `metric` measures, for tooltips.
const char* metric_description(Metric metric);
// "3.7": a head's name in tables and tooltips.
std::string head_name(int layer, int head);
// The range of a metric over all heads (finite values only); {0, 1} when none.
std::pair<double, double> metric_range(const std::vector<HeadMetrics>& metrics, Metric metric);
// `map`'s colour at t in [0, 1].
ImU32 colour_of(Colormap map, double t);
// A combo box over the metrics, each with its description; true when the choice changed.
bool combo_metric(const char* label, Metric& metric);

}   // namespace headscope::ui
