#include "core/analysis/rollout.h"

#include "core/base/error.h"
#include "core/tensor/kernels/weight_panels.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>

namespace headscope {

namespace {

std::string number_text(double value) {
    std::ostringstream out;
    out << value;   // 0.5, 1.5, -0.1: as typed, not std::to_string's 1.500000
    return out.str();
}

// The maps' shape: L layers of H heads, each map [T, T]; throws otherwise.
void check_maps(const HeadMaps& maps, Eigen::Index& H, Eigen::Index& T) {
    if (maps.n_layers() == 0 || maps.n_heads(0) == 0) throw Error("rollout: the trace has no attention maps");
    H = maps.n_heads(0);
    T = maps.rows(0, 0);
    for (Eigen::Index l = 0; l < maps.n_layers(); ++l) {
        if (maps.n_heads(l) != H) {
            throw Error("rollout: layer " + std::to_string(l) + " has " + std::to_string(maps.n_heads(l)) +
                        " heads, layer 0 has " + std::to_string(H));
        }
        for (Eigen::Index h = 0; h < H; ++h) {
            if (maps.rows(l, h) != T || maps.cols(l, h) != T) {
                throw Error("rollout: layer " + std::to_string(l) + " head " + std::to_string(h) + " has a [" +
                            std::to_string(maps.rows(l, h)) + ", " + std::to_string(maps.cols(l, h)) +
                            "] map, expected [" + std::to_string(T) + ", " + std::to_string(T) + "] (self-attention)");
            }
        }
    }
}

// Zeroes the floor(ratio * T * T) smallest entries of the flattened (row-major) map, as
// jacobgil/vit-explain's `flat.topk(k, largest=False)` then `indices[indices != 0]`:
// flat index 0 ([CLS] to [CLS]) may be among the k but is never zeroed. Ties go by flat
// index (the earlier entry counts as smaller), so the result does not depend on a sort's
// whims: nth_element finds the k-th smallest value, then one pass in flat order takes
// every entry below it and the first few equal to it.
void discard_lowest(Matrix& fused, double ratio) {
    const Eigen::Index n = fused.size();
    // int(n * ratio) in Python: the same double product, truncated.
    const auto k = static_cast<Eigen::Index>(std::floor(static_cast<double>(n) * ratio));
    if (k <= 0) return;
    float* flat = fused.data();
    std::vector<float> values(flat, flat + n);
    std::nth_element(values.begin(), values.begin() + (k - 1), values.end());
    const float kth = values[static_cast<std::size_t>(k - 1)];
    Eigen::Index below = 0;
    for (Eigen::Index f = 0; f < n; ++f) below += flat[f] < kth ? 1 : 0;
    Eigen::Index equal_left = k - below;   // how many entries equal to kth are taken
    for (Eigen::Index f = 0; f < n; ++f) {
        bool take = flat[f] < kth;
        if (!take && flat[f] == kth && equal_left > 0) {
            take = true;
            --equal_left;
        }
        if (take && f != 0) flat[f] = 0.0f;
    }
}

}   // namespace

std::string_view head_fusion_name(HeadFusion fusion) {
    switch (fusion) {
    case HeadFusion::mean: return "mean";
    case HeadFusion::max: return "max";
    case HeadFusion::min: return "min";
    }
    return "mean";
}

std::optional<HeadFusion> head_fusion_from_name(std::string_view name) {
    for (const HeadFusion f : {HeadFusion::mean, HeadFusion::max, HeadFusion::min}) {
        if (head_fusion_name(f) == name) return f;
    }
    return std::nullopt;
}

Matrix attention_rollout(const HeadMaps& maps, const RolloutOptions& options, const LoadControl& control) {
    Eigen::Index H = 0, T = 0;
    check_maps(maps, H, T);
    const int L = static_cast<int>(maps.n_layers());
    if (!(options.discard_ratio >= 0.0 && options.discard_ratio < 1.0)) {
        throw Error("rollout: discard ratio " + number_text(options.discard_ratio) + " is outside [0, 1)");
    }
    const int end = options.end_layer == -1 ? L - 1 : options.end_layer;
    if (options.start_layer < 0 || options.start_layer >= L) {
        throw Error("rollout: start layer " + std::to_string(options.start_layer) + " is outside 0.." +
                    std::to_string(L - 1));
    }
    if (end < 0 || end >= L) {
        throw Error("rollout: end layer " + std::to_string(options.end_layer) + " is outside 0.." +
                    std::to_string(L - 1) + " (or -1 for the last)");
    }
    if (options.start_layer > end) {
        throw Error("rollout: start layer " + std::to_string(options.start_layer) + " is after end layer " +
                    std::to_string(end));
    }
    const HeadMask& disabled = options.disabled_heads;
    if (disabled.layers() != 0 || disabled.heads() != 0) {
        if (disabled.layers() != L || disabled.heads() != H) {
            throw Error("rollout: disabled heads are not " + std::to_string(L) + " layers x " + std::to_string(H) +
                        " heads like the trace");
        }
    }

    Matrix rollout = Matrix::Identity(T, T);   // [T, T]
    Matrix fused(T, T), next(T, T), scratch;
    for (int l = options.start_layer; l <= end; ++l) {
        int n_used = 0;
        for (Eigen::Index h = 0; h < H; ++h) {
            if (disabled.off(l, h)) continue;
            control.report(static_cast<double>((l - options.start_layer) * H + h) /
                           static_cast<double>((end - options.start_layer + 1) * H));
            const Matrix& w = maps.map(l, h, scratch);
            if (n_used == 0) {
                fused = w;
            } else if (options.fusion == HeadFusion::mean) {
                fused += w;
            } else if (options.fusion == HeadFusion::max) {
                fused = fused.cwiseMax(w);
            } else {
                fused = fused.cwiseMin(w);
            }
            ++n_used;
        }
        if (n_used == 0) continue;   // every head left out: the identity, R unchanged
        if (options.fusion == HeadFusion::mean) fused /= static_cast<float>(n_used);
        discard_lowest(fused, options.discard_ratio);
        // The residual: A' = (A + I) / 2, then each row over its own sum. vit-explain writes
        // `a / a.sum(dim=-1)`, which broadcasts the [T] sums along the last axis and so
        // divides column j by row j's sum; we normalise rows, which is what the paper means
        // and what keeps R's rows distributions. Every row sums to at least 1/2: no zeros.
        fused.diagonal().array() += 1.0f;
        fused *= 0.5f;
        const Vector row_sums = fused.rowwise().sum();   // [T], evaluated before the division
        fused.array().colwise() /= row_sums.array();
        // next = fused * R, on the forward pass's kernel and threads: R is the [in, out]
        // memory of that product's weight (GPT-2 at 1024 tokens: 2 GFLOP a layer).
        WeightPanels(rollout.data(), rollout.cols(), rollout.rows(), rollout.outerStride(), true).multiply(fused, next);
        rollout.swap(next);
    }
    return rollout;
}

std::vector<bool> keep_mass(const Eigen::Ref<const RowVector>& weights, double mass) {
    if (!(mass >= 0.0 && mass <= 1.0)) throw Error("keep mass: " + number_text(mass) + " is outside [0, 1]");
    const auto n = static_cast<std::size_t>(weights.size());
    std::vector<bool> kept(n, false);
    const double total = weights.cast<double>().sum();
    if (!(total > 0.0)) return kept;
    // Ascending; a stable sort, so of equal weights the later index comes later and is
    // kept first.
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return weights(static_cast<Eigen::Index>(a)) < weights(static_cast<Eigen::Index>(b));
    });
    double cumulative = 0.0;
    for (const std::size_t i : order) {
        cumulative += static_cast<double>(weights(static_cast<Eigen::Index>(i))) / total;
        kept[i] = cumulative > 1.0 - mass;
    }
    return kept;
}

std::vector<GridSegment> mask_contours(const std::vector<bool>& kept, int width, int height) {
    if (width < 0 || height < 0 || kept.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height)) {
        throw Error("contours: " + std::to_string(kept.size()) + " cells for a " + std::to_string(width) + " x " +
                    std::to_string(height) + " grid");
    }
    const auto at = [&](int x, int y) {
        return x >= 0 && y >= 0 && x < width && y < height &&
               kept[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)];
    };
    std::vector<GridSegment> segments;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            if (!at(x, y)) continue;
            const auto fx = static_cast<float>(x), fy = static_cast<float>(y);
            if (!at(x, y - 1)) segments.push_back({fx, fy, fx + 1.0f, fy});                 // top
            if (!at(x + 1, y)) segments.push_back({fx + 1.0f, fy, fx + 1.0f, fy + 1.0f});   // right
            if (!at(x, y + 1)) segments.push_back({fx, fy + 1.0f, fx + 1.0f, fy + 1.0f});   // bottom
            if (!at(x - 1, y)) segments.push_back({fx, fy, fx, fy + 1.0f});                 // left
        }
    }
    return segments;
}

}   // namespace headscope
