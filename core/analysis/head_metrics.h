#pragma once
// Per-head metrics on one input: what a head does, in numbers a person can sort by.
// Definitions (issue 6; A = one head's weights [Tq, Tk], rows = queries; natural logs):
// averages run over query rows with at least one allowed key.
//   entropy        mean of -sum_j A_ij ln A_ij
//   entropy_norm   each row's entropy / ln(its number of allowed keys) (0 where only one key)
//   mean_distance  text: mean of sum_j A_ij |i - j| in tokens. Images: the prefix tokens'
//                  ([CLS], distillation) rows and columns dropped, each row renormalised over
//                  patches, then mean of sum_j A_ij * |centre_i - centre_j| in input pixels
//                  (Dosovitskiy et al. 2021, Fig. 7); patch p's centre is
//                  ((p % grid_width) + 0.5, (p / grid_width) + 0.5) * patch_pixels, and a
//                  patch row with no weight on any patch is left out
//   max_weight     mean of max_j A_ij
//   top_k_mass     mean of the sum of each row's k largest weights (k = MetricContext::top_k)
//   sink_mass      mean of A_i0 (the first token / [CLS]: attention sinks)
//   special_mass   mean of the mass on special positions ([CLS], [SEP], prefix tokens)
//   diag           mean of A_ii
//   prev_token     mean over i >= 1 of A_i,i-1
//   induction      over positions i whose token occurred before (latest earlier occurrence
//                  at j), mean of A_i,j+1 (TransformerLens' induction head detector);
//                  absent when no token repeats (and for images)
//   monotonicity   cross-attention only (A = [Tq, Tk], target rows over source columns):
//                  each row's centre c_i = sum_j A_ij j; the share of rows i >= 1 with
//                  c_i >= c_{i-1} (both rows with weight): 1 when every target token
//                  reads the source at or past where the one before it read (an alignment
//                  that moves forward), about 0.5 for no order; absent below two such rows
// Cross-attention maps are measured by compute_cross_metrics: their rows and columns are
// different sequences, so the position metrics (mean_distance, diag, prev_token,
// induction) are absent there, and monotonicity is absent for self-attention.

#include "core/models/model.h"
#include "core/nn/mask.h"
#include "core/tensor/matrix.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace headscope {

// What the metrics need to know about the input besides the weights.
struct MetricContext {
    // Token ids ([T]) for the induction score; empty: no induction score.
    std::vector<std::int64_t> ids;
    // Positions that are special tokens ([T] flags; empty: none) for special_mass.
    std::vector<bool> special;
    // Images: the patch grid and the tokens before the patches. grid_width == 0 means text.
    int grid_width = 0;
    int grid_height = 0;
    int n_prefix_tokens = 0;
    double patch_pixels = 1.0;   // side of one patch in input pixels
    int top_k = 5;
};

// The context of a model input: ids, special positions (text: tokens with an empty byte
// span, none when no token has a span, as for typed ids; images: the prefix tokens), and
// the image geometry (patch_pixels = info.patch_size).
MetricContext metric_context(const ModelInput& input, const ModelInfo& info);

struct HeadMetrics {
    int layer = 0;
    int head = 0;
    double entropy = 0.0;
    double entropy_norm = 0.0;
    double mean_distance = 0.0;
    double max_weight = 0.0;
    double top_k_mass = 0.0;
    double sink_mass = 0.0;
    double special_mass = 0.0;
    double diag = 0.0;
    double prev_token = 0.0;
    std::optional<double> induction;
    std::optional<double> monotonicity;
    bool cross = false;   // measured as cross-attention (compute_cross_metrics)
    bool operator==(const HeadMetrics& other) const = default;
};

// weights: [T, T] (self-attention); allowed: the mask it ran with ([T, T]) or null (all
// allowed). Rows whose weights are all 0 count as having no allowed key. Throws
// headscope::Error on a shape mismatch between weights, mask and context, or top_k < 1.
// 12 x 12 heads at T = 1024, one thread: ~0.6 s (-march=native), ~1.2 s (x86-64 baseline).
HeadMetrics compute_head_metrics(const Matrix& weights, const Mask* allowed, const MetricContext& context);

// weights: [Tq, Tk], a cross-attention map (each target row over the source's columns);
// `key_special`: [Tk] flags of the special source positions for special_mass (empty:
// none). sink_mass is the weight on the first source position. Throws headscope::Error
// on a shape mismatch or top_k < 1.
HeadMetrics compute_cross_metrics(const Matrix& weights, const std::vector<bool>& key_special, int top_k = 5);

// What one head's metrics are means of: running totals over its map's rows, taken in row
// order, kept for each of the last rows measured (up to metric_totals_kept of them). A run
// whose first p rows are a kept run's (tokens typed or deleted at the end of a causal
// input: those rows of every map are the same) then measures rows p.. alone, from the
// kept totals at p, and gets the numbers measuring every row gives, bit for bit.
struct HeadMetricSums {
    struct Totals {
        double entropy = 0.0, entropy_norm = 0.0, distance = 0.0, max_weight = 0.0, top_k = 0.0;
        double sink = 0.0, special = 0.0, diag = 0.0, prev = 0.0, induction = 0.0;
        int rows = 0, distance_rows = 0, prev_rows = 0, induction_rows = 0;
    };
    Eigen::Index first = 0;   // at[k]: the totals over rows [0, first + k)
    std::vector<Totals> at;   // the last entry: over every row of the map
    // The totals over rows [0, rows), or null when they were not kept.
    const Totals* through(Eigen::Index rows) const {
        const Eigen::Index k = rows - first;
        return k >= 0 && k < static_cast<Eigen::Index>(at.size()) ? &at[static_cast<std::size_t>(k)] : nullptr;
    }
};
inline constexpr Eigen::Index metric_totals_kept = 16;

// Every layer x head of a trace, in order (layer-major).
// `first_layer` > 0 leaves out the layers before it (a run resumed there reuses their metrics).
// `sums`, when given: the measured heads' totals (HeadMetricSums) are written there, one per
// head returned. With `from_row` = p > 0 it must hold that many already, each with its
// totals through row p (a kept run's, whose first p rows every map shares; the caller
// knows the input's first p ids and special positions are that run's too): only rows p..
// are read. Else headscope::Error.
std::vector<HeadMetrics> compute_model_metrics(const ModelTrace& trace, const MetricContext& context,
                                               std::size_t first_layer = 0, std::vector<HeadMetricSums>* sums = nullptr,
                                               Eigen::Index from_row = 0);

// The metrics by name, for sorting, colouring and export.
enum class Metric {
    entropy,
    entropy_norm,
    mean_distance,
    max_weight,
    top_k_mass,
    sink_mass,
    special_mass,
    diag,
    prev_token,
    induction,
    monotonicity
};
inline constexpr int metric_count = 11;
std::string_view metric_name(Metric metric);   // as in the JSON: "entropy", "prev_token", ...
std::optional<Metric> metric_from_name(std::string_view name);
// Absent: induction without repeats; a position metric of a cross-attention head, monotonicity of a self-attention one.
std::optional<double> metric_value(const HeadMetrics& metrics, Metric metric);

}   // namespace headscope
