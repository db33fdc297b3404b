#pragma once
// The invariants of a forward pass that the model-level fuzz targets check (STYLE.md
// 10): one trace per layer and one [T, T] map per head; where the input and weights are
// finite, every map is finite, each row sums to 1 over the keys the mask allows (a row
// it allows none is all 0), masked pairs are exactly 0, and so the causal upper
// triangle is 0.

#include "core/models/model.h"
#include "fuzz_support.h"

#include <cmath>
#include <string>

namespace headscope::fuzz {

inline void check_trace(const ModelInfo& info, const ModelInput& input, const ModelTrace& trace, bool finite_expected) {
    const Eigen::Index T = input.embeddings.rows();
    require(T >= 1 && input.embeddings.cols() == info.width, "input embeddings are not [T, E]");
    require(static_cast<Eigen::Index>(trace.layers.size()) == info.n_layers, "not one trace per layer");
    require(!trace.mask || (trace.mask->rows() == T && trace.mask->cols() == T), "mask is not [T, T]");
    if (finite_expected) require(input.embeddings.allFinite(), "finite weights gave non-finite input embeddings");
    for (std::size_t l = 0; l < trace.layers.size(); ++l) {
        const AttentionTrace& layer = trace.layers[l];
        const std::string where = info.name + " layer " + std::to_string(l);
        require(static_cast<Eigen::Index>(layer.heads.size()) == info.n_heads, where + ": not one map per head");
        require(layer.output.rows() == T && layer.output.cols() == info.width, where + ": output is not [T, E]");
        for (std::size_t h = 0; h < layer.heads.size(); ++h) {
            const Matrix& w = layer.heads[h].weights;
            const auto broken = [&](const std::string& what) {
                finding(where + " head " + std::to_string(h) + ": " + what);
            };
            if (w.rows() != T || w.cols() != T) broken("map is not [T, T]");
            if (!finite_expected) continue;
            if (!w.allFinite()) broken("NaN or Inf in the attention map from finite inputs");
            for (Eigen::Index i = 0; i < T; ++i) {
                double sum = 0.0;
                bool any_allowed = false;
                for (Eigen::Index j = 0; j < T; ++j) {
                    const bool allowed = !trace.mask || (*trace.mask)(i, j);
                    any_allowed = any_allowed || allowed;
                    if (!allowed && w(i, j) != 0.0f) broken("a masked pair has weight " + std::to_string(w(i, j)));
                    if (!(w(i, j) >= 0.0f && w(i, j) <= 1.0f)) broken("a weight outside [0, 1]");
                    sum += w(i, j);
                }
                if (any_allowed ? !(std::abs(sum - 1.0) < 1e-3) : sum != 0.0) {
                    broken("row " + std::to_string(i) + " sums to " + std::to_string(sum));
                }
            }
        }
    }
    if (finite_expected) require(trace.hidden.allFinite(), info.name + ": NaN or Inf in the hidden states");
}

}   // namespace headscope::fuzz
