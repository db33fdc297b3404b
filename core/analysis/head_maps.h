#pragma once
// Where analysis reads heads' maps: a run that kept them, or one that streamed them
// (RunOptions::on_map), whose maps its model computes again one at a time, bit for bit.
// Rollout and similarity go through this, so they work on a long input's reduced state
// and hold one map (rollout) or the maps they compare, never a second copy of a trace.

#include "core/models/model.h"
#include "core/tensor/matrix.h"

namespace headscope {

class HeadMaps {
public:
    // `model` computes the maps of streamed layers; null when every layer kept its maps.
    explicit HeadMaps(const ModelTrace& trace, const Model* model = nullptr) : trace_(trace), model_(model) {}

    Eigen::Index n_layers() const { return static_cast<Eigen::Index>(trace_.layers.size()); }
    Eigen::Index n_heads(Eigen::Index layer) const;
    // Head (layer, head)'s map [Tq, Tk]'s shape, without computing it.
    Eigen::Index rows(Eigen::Index layer, Eigen::Index head) const;
    Eigen::Index cols(Eigen::Index layer, Eigen::Index head) const;
    // Head (layer, head)'s map: the kept one, or computed into `scratch` and returned.
    const Matrix& map(Eigen::Index layer, Eigen::Index head, Matrix& scratch) const;
    // Whether any layer streamed its maps (reading them costs a computation each).
    bool computes_maps() const;

private:
    const HeadTrace& head(Eigen::Index layer, Eigen::Index h) const;
    const ModelTrace& trace_;
    const Model* model_;
};

}   // namespace headscope
