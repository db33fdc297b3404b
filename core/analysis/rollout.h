#pragma once
// Attention rollout (Abnar & Zuidema 2020) and DINO's "keep x% of the mass" masks.
//
// Rollout: for layers start..end, fuse the heads (mean / max / min over the enabled
// heads), optionally zero the lowest `discard_ratio` of the fused entries (the
// floor(ratio * T * T) smallest of the flattened map, ties by flat index; never entry
// (0, 0), as jacobgil/vit-explain keeps [CLS]), add the identity for the residual,
// renormalise each row to sum 1 (A' = (A + I) / 2, then rows / row sums), and multiply:
// R = A'_end ... A'_start. Row i of R says how much output position i draws on each
// input token. A layer whose heads are all disabled is the identity.

#include "core/analysis/head_maps.h"
#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/tensor/matrix.h"

#include <optional>
#include <string_view>
#include <vector>

namespace headscope {

enum class HeadFusion { mean, max, min };
std::string_view head_fusion_name(HeadFusion fusion);   // "mean", "max", "min"
std::optional<HeadFusion> head_fusion_from_name(std::string_view name);

struct RolloutOptions {
    HeadFusion fusion = HeadFusion::mean;
    double discard_ratio = 0.0;   // 0 <= r < 1: fraction of the fused entries zeroed, lowest first
    int start_layer = 0;          // first layer multiplied in
    int end_layer = -1;           // last layer, inclusive; -1: the last layer
    HeadMask disabled_heads;      // [L][H] or unsized: left out of the fusion
};

// Throws headscope::Error naming the option when it is out of range for the trace.
// Layer by layer, one map at a time: a streamed run's maps are computed as they are fused
// (L x H map computations; besides them, three [T, T] matrices are held).
// Reports progress and stops (LoadCancelled) through `control` between maps.
Matrix attention_rollout(const HeadMaps& maps, const RolloutOptions& options,
                         const LoadControl& control = {});   // [T, T]
inline Matrix attention_rollout(const ModelTrace& trace, const RolloutOptions& options) {
    return attention_rollout(HeadMaps(trace), options);
}

// DINO's visualize_attention.py threshold: of `weights` (one query's attention over the
// patches, any non-negative scale; renormalised here), keep the largest entries until
// they hold `mass` (0..1) of the total: sort ascending, cumulative sum, keep where the
// cumulative share > 1 - mass (equal weights: the later index is kept first). All false
// when the weights sum to 0. Throws headscope::Error when mass is outside [0, 1].
std::vector<bool> keep_mass(const Eigen::Ref<const RowVector>& weights, double mass);

// The cells on the boundary of a kept region of a grid (row-major flags [height * width]):
// the edges between a kept cell and a dropped one or the border, as line segments in cell
// units ({x0, y0, x1, y1}), for drawing contours.
struct GridSegment {
    float x0, y0, x1, y1;
};
std::vector<GridSegment> mask_contours(const std::vector<bool>& kept, int width, int height);

}   // namespace headscope
