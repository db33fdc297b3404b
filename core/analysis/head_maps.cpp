#include "core/analysis/head_maps.h"

#include "core/base/error.h"

#include <string>

namespace headscope {

Eigen::Index HeadMaps::n_heads(Eigen::Index layer) const {
    return static_cast<Eigen::Index>(trace_.layers[static_cast<std::size_t>(layer)].heads.size());
}

const HeadTrace& HeadMaps::head(Eigen::Index layer, Eigen::Index h) const {
    return trace_.layers[static_cast<std::size_t>(layer)].heads[static_cast<std::size_t>(h)];
}

Eigen::Index HeadMaps::rows(Eigen::Index layer, Eigen::Index h) const {
    const AttentionTrace& kept = trace_.layers[static_cast<std::size_t>(layer)];
    return streamed(kept) ? kept.queries.rows() : head(layer, h).weights.rows();
}

Eigen::Index HeadMaps::cols(Eigen::Index layer, Eigen::Index h) const {
    const AttentionTrace& kept = trace_.layers[static_cast<std::size_t>(layer)];
    return streamed(kept) ? kept.keys.rows() : head(layer, h).weights.cols();
}

const Matrix& HeadMaps::map(Eigen::Index layer, Eigen::Index h, Matrix& scratch) const {
    if (!streamed(trace_.layers[static_cast<std::size_t>(layer)])) return head(layer, h).weights;
    if (model_ == nullptr) {
        throw Error("layer " + std::to_string(layer) + " streamed its maps, and no model was given to compute them");
    }
    scratch = model_->head_map(trace_, layer, h);
    return scratch;
}

bool HeadMaps::computes_maps() const {
    for (const AttentionTrace& layer : trace_.layers) {
        if (streamed(layer)) return true;
    }
    return false;
}

}   // namespace headscope
