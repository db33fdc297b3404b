#pragma once
// The numbers `headscope-cli analyze` writes (and the window exports): head metrics,
// rollout, head similarity and importance, as JSON or as a CSV table of one row per head.
//
// JSON: {"model", "tokens": [...], "heads": [{"layer", "head", "entropy", ...}, ...],
//        "rollout": {...}, "similarity": {...}, "importance": {...}}  (the last three
// when computed). CSV: the `heads` rows, one per layer x head, with the metric columns
// plus the importance effect and MDS coordinates when those were computed.

#include "core/analysis/ablation_effects.h"
#include "core/analysis/head_metrics.h"
#include "core/analysis/head_similarity.h"
#include "core/analysis/rollout.h"
#include "core/tensor/matrix.h"

#include <optional>
#include <string>
#include <vector>

namespace headscope {

struct RolloutResult {
    RolloutOptions options;   // end_layer resolved (never -1)
    Matrix matrix;            // [T, T]
};

struct AnalysisReport {
    std::string model;
    std::vector<std::string> tokens;   // [T] labels of the positions
    Eigen::Index n_layers = 0;
    Eigen::Index n_heads = 0;
    std::vector<HeadMetrics> metrics;   // [L * H] layer-major, or empty when not asked
    std::optional<RolloutResult> rollout;
    std::optional<HeadSimilarity> similarity;
    std::optional<ImportanceScan> importance;
};

std::string analysis_json(const AnalysisReport& report);
// Throws headscope::Error when the report holds a rollout (a [T, T] matrix has no place
// in a table of heads) or nothing per head.
std::string analysis_csv(const AnalysisReport& report);

}   // namespace headscope
