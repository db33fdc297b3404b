#pragma once
// What the views need of a head's map when the map itself is not kept (maps on demand,
// RunOptions::on_map): its metrics and a thumbnail pooled from it, both computed from the
// map as the forward hands it over, so a run's memory holds L x H of these (a few KB
// each) instead of L x H maps of T x T. The full map is computed again when it is looked
// at (Model::head_map).

#include "core/analysis/head_metrics.h"
#include "core/nn/mask.h"
#include "core/tensor/matrix.h"

namespace headscope {

struct HeadSummary {
    HeadMetrics metrics;
    // The map pooled to at most side x side cells, each over its block of query rows and
    // key columns (block edges at i * T / side): the largest weight, so a sharp line of
    // attention survives the shrinking, and the mean, so mass does.
    Matrix pooled_max;
    Matrix pooled_mean;
};

// `map`: one head's weights [Tq, Tk]; `allowed`: the mask it ran with, or null. Maps of at
// most `side` rows and columns are kept whole in the pooled pair. Throws headscope::Error
// as compute_head_metrics does, or for side < 1.
HeadSummary summarize_head(const Matrix& map, const Mask* allowed, const MetricContext& context, int layer, int head,
                           Eigen::Index side = 64);

}   // namespace headscope
