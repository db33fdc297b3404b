#include "core/nn/prefix_reuse.h"

#include "core/base/error.h"
#include "core/nn/mask.h"
#include "core/tensor/memory_reuse.h"
#include "core/tensor/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace headscope {

void check_prefix_reuse(const std::string& model, Eigen::Index n_layers, const RunOptions& options,
                        const OptionalMask& mask, Eigen::Index T) {
    const ModelTrace* kept = options.prefix_from;
    const Eigen::Index p = options.prefix_rows;
    const std::string who = model + ": cannot reuse the unchanged start of the input: ";
    if (options.resume_from != nullptr) throw Error(who + "a run resumes at a layer or reuses a prefix, not both");
    if (p < 1 || p >= T) {
        throw Error(who + std::to_string(p) + " unchanged positions of " + std::to_string(T) + " (expected 1.." +
                    std::to_string(T - 1) + ")");
    }
    // (The logits are checked where they are joined: HfDecoderModel::forward.)
    if (static_cast<Eigen::Index>(kept->layers.size()) != n_layers || kept->hidden.rows() < p) {
        throw Error(who + "the kept run does not cover those positions");
    }
    for (const AttentionTrace& layer : kept->layers) {
        if (layer.keys.rows() < p || layer.values.rows() < p) {
            throw Error(who +
                        "the kept run did not keep every layer's keys and values (RunOptions::keep_layer_inputs)");
        }
    }
    if (options.keep_layer_inputs &&
        (static_cast<Eigen::Index>(kept->layer_inputs.size()) != n_layers || kept->layer_inputs[0].rows() < p)) {
        throw Error(who + "the kept run did not keep every layer's input for those positions");
    }
    for (Eigen::Index l = 0; l < n_layers; ++l) {
        const AttentionTrace& layer = kept->layers[static_cast<std::size_t>(l)];
        if (layer.heads.empty() || detail_of(layer) != options.detail_at(l)) {
            throw Error(who + "the kept run was computed at another detail (layer " + std::to_string(l) + ")");
        }
    }
    if (!mask) {
        throw Error(who + "without a causal mask every position sees the changed ones");
    }
    if (mask->rows() != T || mask->cols() != T) {
        throw Error(who + "the attention mask is [" + std::to_string(mask->rows()) + ", " +
                    std::to_string(mask->cols()) + "], expected [" + std::to_string(T) + ", " + std::to_string(T) +
                    "]");
    }
    if (mask_allows_any(*mask, 0, p, p, T - p)) {
        throw Error(who + "a position before " + std::to_string(p) +
                    " sees a later one (the mask is not causal there)");
    }
    const bool kept_mask_fits =
        kept->mask && kept->mask->rows() >= p && kept->mask->cols() >= p && masks_agree(*kept->mask, *mask, p, p);
    if (!kept_mask_fits) throw Error(who + "the kept run had another attention mask");
}

OptionalMask mask_rows_from(const OptionalMask& mask, Eigen::Index p) {
    if (!mask) return std::nullopt;
    return Mask(mask->bottomRows(mask->rows() - p));
}

// These copies are memory-bound (a typed token at T = 1,000 copies 144 maps of 4 MB and
// GPT-2's 200 MB of logits): one core reaches about half the bandwidth two do, so rows or
// heads are shared out, the results allocated first (a parallel region must not allocate).

Matrix stack_rows(const Matrix& top, Eigen::Index p, const Matrix& bottom) {
    Matrix out(p + bottom.rows(), bottom.cols());
    advise_huge_pages(out.data(),
                      static_cast<std::size_t>(out.size()) * sizeof(float));   // GPT-2's logits: 206 MB at T=1024
    const Eigen::Index cols = bottom.cols();
    parallel_ranges(out.rows(), static_cast<double>(out.size()), [&](Eigen::Index begin, Eigen::Index end) {
        for (Eigen::Index i = begin; i < end; ++i) {
            if (i < p) {
                out.row(i) = top.row(i).head(cols);
            } else {
                out.row(i) = bottom.row(i - p);
            }
        }
    });
    return out;
}

namespace {

// `out` [T, T] from the kept rows' first p columns (later columns: `fill`) and the computed rows.
void fill_square(Matrix& out, const Matrix& kept, Eigen::Index p, const Matrix& computed, float fill) {
    const Eigen::Index T = p + computed.rows();
    out.topLeftCorner(p, p) = kept.topLeftCorner(p, p);
    out.topRightCorner(p, T - p).setConstant(fill);
    out.bottomRows(T - p) = computed;
}

Matrix stack_square(const Matrix& kept, Eigen::Index p, const Matrix& computed, float fill) {
    const Eigen::Index T = p + computed.rows();
    Matrix out(T, T);
    fill_square(out, kept, p, computed, fill);
    return out;
}

// Every head's map [T, T]: the kept rows' and the computed ones, a head to a thread.
void join_maps(std::vector<HeadTrace>& out, const AttentionTrace& kept, const AttentionTrace& computed,
               Eigen::Index p) {
    const auto H = static_cast<Eigen::Index>(computed.heads.size());
    const Eigen::Index T = p + computed.output.rows();
    for (HeadTrace& head : out) head.weights.resize(T, T);
    parallel_items(H, static_cast<double>(H) * static_cast<double>(T * T), [&](Eigen::Index h) {
        const auto at = static_cast<std::size_t>(h);
        // The earlier rows see no new key.
        fill_square(out[at].weights, kept.heads[at].weights, p, computed.heads[at].weights, 0.0f);
    });
}

}   // namespace

AttentionTrace join_prefix(const AttentionWeights& weights, const AttentionTrace& kept, AttentionTrace computed,
                           Eigen::Index p, const OptionalMask& mask, const AttentionOptions& options) {
    const TraceDetail detail = options.detail;
    AttentionTrace out;
    out.window = options.window;
    out.heads.resize(computed.heads.size());
    const Eigen::Index T = p + computed.output.rows();
    join_maps(out.heads, kept, computed, p);
    for (std::size_t h = 0; detail == TraceDetail::all_stages && h < computed.heads.size(); ++h) {
        const HeadTrace& a = kept.heads[h];
        HeadTrace& b = computed.heads[h];
        HeadTrace& head = out.heads[h];
        head.q = stack_rows(a.q, p, b.q);
        head.k = std::move(b.k);   // every key, computed
        if (b.q_unrotated.size() != 0) {
            // Before the rotation only the new positions' were computed.
            head.q_unrotated = stack_rows(a.q_unrotated, p, b.q_unrotated);
            head.k_unrotated = stack_rows(a.k_unrotated, p, b.k_unrotated);
        }
        head.v = std::move(b.v);
        head.context = stack_rows(a.context, p, b.context);
        // Scores come before the mask: the earlier queries against the new keys are real
        // numbers (masked out afterwards), computed here.
        head.scores = stack_square(a.scores, p, b.scores, 0.0f);
        head.scores.topRightCorner(p, T - p) = head_scores(weights, head.q.topRows(p), head.k.bottomRows(T - p));
        constexpr float minus_inf = -std::numeric_limits<float>::infinity();
        head.masked = mask ? Matrix(mask->select(head.scores.array(), minus_inf).matrix()) : head.scores;
        for (Eigen::Index i = 0; options.window > 0 && i < T; ++i) {
            head.masked.row(i).head(std::clamp<Eigen::Index>(i - options.window + 1, 0, T)).setConstant(minus_inf);
        }
    }
    if (detail == TraceDetail::all_stages) out.input = stack_rows(kept.input, p, computed.input);
    out.concat = stack_rows(kept.concat, p, computed.concat);
    out.keys = std::move(computed.keys);   // every position's, when kept
    out.values = std::move(computed.values);
    out.output = stack_rows(kept.output, p, computed.output);
    return out;
}

}   // namespace headscope
