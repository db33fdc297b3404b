#include "core/analysis/analysis_report.h"

#include "core/base/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace headscope {

namespace {

using Json = nlohmann::ordered_json;

// A number, or null where it is not finite: JSON has no NaN, and no reader should take
// one for data.
Json number(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json matrix_json(const Matrix& m) {
    Json rows = Json::array();
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        Json row = Json::array();
        for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(number(m(i, j)));
        rows.push_back(std::move(row));
    }
    return rows;
}

Json head_metrics_json(const HeadMetrics& m) {
    Json out;
    out["layer"] = m.layer;
    out["head"] = m.head;
    for (int k = 0; k < metric_count; ++k) {
        const auto metric = static_cast<Metric>(k);
        const std::optional<double> value = metric_value(m, metric);
        out[std::string(metric_name(metric))] = value ? number(*value) : Json(nullptr);
    }
    return out;
}

// The index of (layer, head) in a similarity's heads, or -1.
int similarity_index(const HeadSimilarity& similarity, int layer, int head) {
    for (std::size_t n = 0; n < similarity.heads.size(); ++n) {
        if (similarity.heads[n] == std::pair{layer, head}) return static_cast<int>(n);
    }
    return -1;
}

// Shortest text that reads back as the same double.
std::string csv_number(double value) {
    if (!std::isfinite(value)) return "";
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", value);
    return text;
}

}   // namespace

std::string analysis_json(const AnalysisReport& report) {
    Json out;
    out["model"] = report.model;
    out["tokens"] = report.tokens;
    out["layers"] = report.n_layers;
    out["heads_per_layer"] = report.n_heads;
    Json heads = Json::array();
    for (const HeadMetrics& m : report.metrics) heads.push_back(head_metrics_json(m));
    out["heads"] = std::move(heads);
    if (report.rollout) {
        const RolloutOptions& o = report.rollout->options;
        Json rollout;
        rollout["fusion"] = std::string(head_fusion_name(o.fusion));
        rollout["discard_ratio"] = o.discard_ratio;
        rollout["start_layer"] = o.start_layer;
        rollout["end_layer"] = o.end_layer;
        rollout["matrix"] = matrix_json(report.rollout->matrix);
        out["rollout"] = std::move(rollout);
    }
    if (report.similarity) {
        const HeadSimilarity& s = *report.similarity;
        Json similarity;
        similarity["unit"] = "bits";
        Json heads_out = Json::array();
        for (std::size_t n = 0; n < s.heads.size(); ++n) {
            Json head;
            head["layer"] = s.heads[n].first;
            head["head"] = s.heads[n].second;
            head["x"] = number(s.mds(static_cast<Eigen::Index>(n), 0));
            head["y"] = number(s.mds(static_cast<Eigen::Index>(n), 1));
            heads_out.push_back(std::move(head));
        }
        similarity["heads"] = std::move(heads_out);
        similarity["order"] = s.order;
        similarity["divergence"] = matrix_json(s.divergence);
        out["similarity"] = std::move(similarity);
    }
    if (report.importance) {
        const ImportanceScan& scan = *report.importance;
        Json importance;
        importance["measure"] = std::string(effect_measure_name(scan.measure));
        Json rows = Json::array();
        for (Eigen::Index l = 0; l < scan.effect.rows(); ++l) {
            for (Eigen::Index h = 0; h < scan.effect.cols(); ++h) {
                Json row;
                row["layer"] = l;
                row["head"] = h;
                row["effect"] = number(scan.effect(l, h));
                rows.push_back(std::move(row));
            }
        }
        importance["heads"] = std::move(rows);
        out["importance"] = std::move(importance);
    }
    return out.dump(1) + "\n";
}

std::string analysis_csv(const AnalysisReport& report) {
    if (report.rollout) {
        throw Error("rollout is a [T, T] matrix, not a row per head: write it to a .json file");
    }
    if (report.metrics.empty() && !report.similarity && !report.importance) {
        throw Error("nothing per head to write as CSV");
    }
    std::string csv = "layer,head";
    if (!report.metrics.empty()) {
        for (int k = 0; k < metric_count; ++k) csv.append(",").append(metric_name(static_cast<Metric>(k)));
    }
    if (report.importance) csv.append(",importance_").append(effect_measure_name(report.importance->measure));
    if (report.similarity) csv.append(",mds_x,mds_y");
    csv += "\n";
    for (Eigen::Index l = 0; l < report.n_layers; ++l) {
        for (Eigen::Index h = 0; h < report.n_heads; ++h) {
            csv.append(std::to_string(l)).append(",").append(std::to_string(h));
            if (!report.metrics.empty()) {
                const HeadMetrics& m = report.metrics.at(static_cast<std::size_t>(l * report.n_heads + h));
                for (int k = 0; k < metric_count; ++k) {
                    const std::optional<double> value = metric_value(m, static_cast<Metric>(k));
                    csv.append(",").append(value ? csv_number(*value) : "");
                }
            }
            if (report.importance) csv.append(",").append(csv_number(report.importance->effect(l, h)));
            if (report.similarity) {
                const int n = similarity_index(*report.similarity, static_cast<int>(l), static_cast<int>(h));
                if (n < 0) {
                    csv.append(",,");
                } else {
                    csv.append(",").append(csv_number(report.similarity->mds(n, 0)));
                    csv.append(",").append(csv_number(report.similarity->mds(n, 1)));
                }
            }
            csv += "\n";
        }
    }
    return csv;
}

}   // namespace headscope
