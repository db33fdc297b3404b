#include "core/nn/attention.h"

#include "core/base/error.h"
#include "core/tensor/kernels/exp_sum.h"
#include "core/tensor/kernels/weight_panels.h"
#include "core/tensor/memory_reuse.h"
#include "core/tensor/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace headscope {

namespace {

std::string dims(Eigen::Index rows, Eigen::Index cols) {
    return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

void check_linear(const Linear& layer, const char* name, Eigen::Index out, Eigen::Index in_width) {
    if (layer.weight.rows() != out || (in_width >= 0 && layer.weight.cols() != in_width)) {
        throw Error(std::string(name) + ".weight: expected shape " +
                    dims(out, in_width >= 0 ? in_width : layer.weight.cols()) + ", got " +
                    dims(layer.weight.rows(), layer.weight.cols()));
    }
    if (layer.bias.size() != 0 && layer.bias.size() != out) {
        throw Error(std::string(name) + ".bias: expected shape [" + std::to_string(out) + "], got [" +
                    std::to_string(layer.bias.size()) + "]");
    }
}

}   // namespace

void AttentionWeights::validate() const {
    if (n_heads < 1) throw Error("number of heads must be at least 1, got " + std::to_string(n_heads));
    const Eigen::Index D = inner_width();
    const Eigen::Index E = model_width();
    if (D < 1 || E < 1) throw Error("q_proj.weight: expected a non-empty [D, E] matrix, got " + dims(D, E));
    if (D % n_heads != 0) {
        throw Error("inner width D = " + std::to_string(D) + " is not divisible by " + std::to_string(n_heads) +
                    " heads");
    }
    const Eigen::Index Hkv = kv_heads();
    if (Hkv < 1 || n_heads % Hkv != 0) {
        throw Error(std::to_string(n_heads) + " query heads cannot share " + std::to_string(Hkv) +
                    " key/value heads (expected a divisor of the query heads)");
    }
    const Eigen::Index Dkv = Hkv * (D / n_heads);
    check_linear(q, "q_proj", D, E);
    check_linear(k, "k_proj", Dkv, -1);
    check_linear(v, "v_proj", Dkv, -1);
    check_linear(out, "out_proj", E, D);
    for (const Norm* norm : {&q_norm, &k_norm}) {
        if (norm->weight.size() != 0 && norm->weight.size() != D / n_heads) {
            throw Error(std::string(norm == &q_norm ? "q_norm" : "k_norm") + ".weight: expected shape [" +
                        std::to_string(D / n_heads) + "] (the head width), got [" +
                        std::to_string(norm->weight.size()) + "]");
        }
    }
    if (qkv.weight.size() != 0) {
        check_linear(qkv, "qkv_proj", D + 2 * Dkv, E);
        if ((qkv.bias.size() != 0) != (q.bias.size() != 0)) throw Error("qkv_proj.bias: present unlike q_proj.bias");
    }
    if (key_width() < 1 || value_width() < 1) throw Error("k_proj/v_proj: input width must be at least 1");
    if (position_bias.active() && (position_bias.table.cols() != n_heads || position_bias.buckets() < 2)) {
        throw Error("relative_attention_bias.weight: expected [buckets >= 2, " + std::to_string(n_heads) +
                    " heads], got " + dims(position_bias.table.rows(), position_bias.table.cols()));
    }
}

float AttentionWeights::scale() const {
    return score_scale != 0.0f ? score_scale : 1.0f / std::sqrt(static_cast<float>(head_width()));
}

Matrix head_scores(const AttentionWeights& w, const ConstMatrixRef& q, const ConstMatrixRef& k) {
    Matrix scores = w.scale() * (q * k.transpose());
    if (w.score_cap != 0.0f) scores = (w.score_cap * (scores.array() / w.score_cap).tanh()).matrix();
    return scores;
}

Matrix linear_forward(const Linear& layer, const ConstMatrixRef& x) {
    Matrix y(x.rows(), layer.weight.rows());
    layer.weight.multiply(x, y, layer.bias.size() != 0 ? &layer.bias : nullptr);
    return y;
}

namespace {

// Where one row's allowed keys lie: between first and end, all of them (a run; none when
// first == end), or some with gaps between. Masks are mostly one run per row (causal: a
// prefix); a run is a plain vectorised softmax. Found once per mask, not once per head.
struct AllowedKeys {
    Eigen::Index first = 0;
    Eigen::Index end = 0;
    bool gaps = false;
    Eigen::Index window_first =
        0;   // a sliding window's first key (rows with gaps read it; the others' `first` has it)
};

std::vector<AllowedKeys> allowed_keys(const Mask& allowed) {
    // The flags as bytes (a bool is one byte, 0 or 1), searched with glibc's vectorised
    // memchr and memrchr: std::find went a byte at a time, and at T = 1024 this scan, on
    // one thread before the heads start, took 0.6% of a two-thread GPT-2 forward.
    const auto n = static_cast<std::size_t>(allowed.cols());
    const auto at = [](const void* found, const bool* keep) {
        return static_cast<Eigen::Index>(static_cast<const unsigned char*>(found) -
                                         reinterpret_cast<const unsigned char*>(keep));
    };
    std::vector<AllowedKeys> rows(static_cast<std::size_t>(allowed.rows()));
    if (n == 0) return rows;   // no keys (and no memory to search)
    for (Eigen::Index i = 0; i < allowed.rows(); ++i) {
        const bool* keep = allowed.row(i).data();
        AllowedKeys& row = rows[static_cast<std::size_t>(i)];
        const void* first = std::memchr(keep, true, n);
        if (first == nullptr) continue;   // none: an empty run at 0 (a product needs none of the row)
        row.first = at(first, keep);
        const auto from_first = n - static_cast<std::size_t>(row.first);
        row.end = at(memrchr(first, true, from_first), keep) + 1;
        row.gaps = std::memchr(first, false, static_cast<std::size_t>(row.end - row.first)) != nullptr;
    }
    return rows;
}

// Each row's keys narrowed by a sliding window W (query row i sits at position
// Tk - Tq + i): keys before position - W + 1 are masked, whatever the mask says.
void narrow_to_window(std::vector<AllowedKeys>& rows, Eigen::Index window, Eigen::Index Tk) {
    if (window <= 0) return;
    const auto Tq = static_cast<Eigen::Index>(rows.size());
    for (Eigen::Index i = 0; i < Tq; ++i) {
        AllowedKeys& row = rows[static_cast<std::size_t>(i)];
        const Eigen::Index from = std::max<Eigen::Index>(Tk - Tq + i - window + 1, 0);
        row.window_first = from;
        if (row.gaps) continue;   // the gap path reads window_first
        if (from >= row.end) {
            row.first = row.end = 0;   // nothing left: an empty run
        } else {
            row.first = std::max(row.first, from);
        }
    }
}

// The softmax of a row whose allowed keys have gaps between them, key by key. Masked
// weights must be exactly 0, so they are selected after the exp: Eigen's vectorised exp
// clamps its argument (exp(-inf) is tiny, not 0), and a NaN score (NaN weights) makes the
// sum NaN, which must not spread to the masked cells.
template <typename Row, typename Keep>
void softmax_with_gaps(Row row, const Keep& keep) {
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();
    const float max = keep.select(row, minus_inf).maxCoeff();
    if (max == minus_inf) {   // no allowed key, or only -inf (and maybe NaN: maxCoeff may skip it)
        const bool nan = (keep && row.isNaN()).any();
        row.setZero();
        if (nan) row = keep.select(row + std::numeric_limits<float>::quiet_NaN(), row);
        return;
    }
    row = keep.select((row - max).exp(), 0.0f);
    row = keep.select(row * (1.0f / row.sum()), 0.0f);
}

// softmax_rows over rows [first, last), with each row's allowed keys found (empty: every
// key of every row). Rows are independent: any split of them gives the same values.
void softmax_row_range(MatrixRef scores, const Mask* allowed, std::span<const AllowedKeys> keys, Eigen::Index first,
                       Eigen::Index last) {
    const Eigen::Index n = scores.cols();
    // Rows a block at a time, in three passes over the block (maxima, exponentials and
    // their sums, scaling): the rows' work is independent, so the core overlaps one row's
    // reductions with the next row's loads, where a row at a time waits on each (a head's
    // 64 x 64 map: 2.17 -> 1.66 us, with max_value and scale_values).
    constexpr Eigen::Index block = 32;
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();
    for (Eigen::Index top = first; top < last; top += block) {
        const Eigen::Index rows = std::min(block, last - top);
        AllowedKeys run[block];
        float max[block];
        for (Eigen::Index r = 0; r < rows; ++r) {
            const Eigen::Index i = top + r;
            run[r] = keys.empty() ? AllowedKeys{0, n, false} : keys[static_cast<std::size_t>(i)];
            float* row = scores.row(i).data();
            if (run[r].gaps) {
                if (run[r].window_first > 0) {
                    Eigen::Array<bool, 1, Eigen::Dynamic> keep = allowed->row(i);
                    keep.head(std::min(run[r].window_first, n)).setConstant(false);
                    softmax_with_gaps(scores.row(i).array(), keep);
                } else {
                    softmax_with_gaps(scores.row(i).array(), allowed->row(i));
                }
                continue;
            }
            std::fill(row, row + run[r].first, 0.0f);
            std::fill(row + run[r].end, row + n, 0.0f);
            // Where no key is allowed, or every allowed score is -inf, the row becomes all 0
            // rather than 0/0. (max_value may pass over a NaN, which otherwise makes the sum
            // and so the row NaN: so does it here.)
            float* const begin = row + run[r].first;
            float* const end = row + run[r].end;
            max[r] = begin < end ? max_value(begin, end - begin) : minus_inf;
            if (max[r] == minus_inf) {
                const bool nan = std::any_of(begin, end, [](float score) { return std::isnan(score); });
                std::fill(begin, end, nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
                run[r].gaps = true;   // done
            }
        }
        float sum[block];
        for (Eigen::Index r = 0; r < rows; ++r) {
            if (!run[r].gaps)
                sum[r] = exp_shifted_sum(scores.row(top + r).data() + run[r].first, run[r].end - run[r].first, max[r]);
        }
        for (Eigen::Index r = 0; r < rows; ++r) {
            if (!run[r].gaps)
                scale_values(scores.row(top + r).data() + run[r].first, run[r].end - run[r].first, 1.0f / sum[r]);
        }
    }
}

// Every row: shared among the threads, except inside a parallel region (a forward's heads
// run on a thread each), where it is all this thread's.
void softmax_rows(MatrixRef scores, const Mask* allowed, std::span<const AllowedKeys> keys) {
    const double work = 8.0 * static_cast<double>(scores.rows()) * static_cast<double>(scores.cols());
    parallel_ranges(scores.rows(), work, [&](Eigen::Index first, Eigen::Index last) {
        softmax_row_range(scores, allowed, keys, first, last);
    });
}

}   // namespace

void softmax_rows(MatrixRef scores, const Mask* allowed) {
    if (allowed != nullptr && (allowed->rows() != scores.rows() || allowed->cols() != scores.cols())) {
        throw Error("mask: expected shape " + dims(scores.rows(), scores.cols()) + " (the scores'), got " +
                    dims(allowed->rows(), allowed->cols()));
    }
    softmax_rows(scores, allowed, allowed != nullptr ? allowed_keys(*allowed) : std::vector<AllowedKeys>{});
}

namespace {

void check_query_width(const AttentionWeights& w, const ConstMatrixRef& x_q) {
    if (x_q.cols() != w.model_width()) {
        throw Error("query input: expected width E = " + std::to_string(w.model_width()) + ", got " +
                    std::to_string(x_q.cols()));
    }
}

// The mask and the disabled-head flags must fit the heads and the [Tq, Tk] scores.
void check_attend_options(const AttentionOptions& options, const Mask* allowed, Eigen::Index H, Eigen::Index Tq,
                          Eigen::Index Tk) {
    if (allowed && (allowed->rows() != Tq || allowed->cols() != Tk)) {
        throw Error("mask: expected shape " + dims(Tq, Tk) + " (queries x keys), got " +
                    dims(allowed->rows(), allowed->cols()));
    }
    if (!options.disabled_heads.empty() && static_cast<Eigen::Index>(options.disabled_heads.size()) != H) {
        throw Error("disabled heads: expected " + std::to_string(H) + " flags, got " +
                    std::to_string(options.disabled_heads.size()));
    }
    if (options.stages_head < -1 || options.stages_head >= H) {
        throw Error("head " + std::to_string(options.stages_head) + ": the layer has heads 0.." +
                    std::to_string(H - 1));
    }
}

// Whether head h is computed: every head, unless the stages of one alone were asked for.
bool computes_head(const AttentionOptions& options, Eigen::Index h) {
    return options.detail != TraceDetail::all_stages || options.stages_head < 0 || options.stages_head == h;
}

// What every head of one attend() reads: the projections, the options and the keys each
// query may see, fixed before the threads start.
struct HeadsPlan {
    const AttentionWeights& w;
    const ConstMatrixRef& q;
    const ConstMatrixRef& k;
    const ConstMatrixRef& v;
    const AttentionOptions& options;
    const Mask* allowed = nullptr;
    Eigen::Index G = 1;   // query heads per key/value head
    Eigen::Index Dh = 0;
    float scale = 1.0f;
    bool all_stages = false;
    // Where each query's allowed keys end (causal: at itself). The products skip what lies
    // past it (multiply_leading): a masked score is never read, and a masked weight is 0.
    // The stages, when kept, show every score, so those are all computed.
    std::vector<AllowedKeys> keys_allowed;
    std::vector<Eigen::Index> key_ends;
};

// The trace with every buffer a thread writes allocated, before the threads start: the
// threads then only compute (an allocation failure stays an exception on this thread).
// Streamed maps (on_map) are not kept: their heads get no room.
AttentionTrace allocated_trace(const HeadsPlan& plan, const ConstMatrixRef& x_q, Eigen::Index Tq, Eigen::Index Tk,
                               bool streamed) {
    AttentionTrace trace;
    if (plan.all_stages) trace.input = x_q;
    trace.heads.resize(static_cast<std::size_t>(plan.w.n_heads));
    if (plan.options.stages_head >= 0 && plan.all_stages) {
        trace.concat.setZero(Tq, plan.w.inner_width());   // the heads not computed add nothing
    } else {
        trace.concat.resize(Tq, plan.w.inner_width());
    }
    for (Eigen::Index h = 0; h < plan.w.n_heads; ++h) {
        if (!computes_head(plan.options, h)) continue;
        HeadTrace& head = trace.heads[static_cast<std::size_t>(h)];
        if (!streamed) {
            head.weights.resize(Tq, Tk);
            advise_huge_pages(head.weights.data(), static_cast<std::size_t>(head.weights.size()) * sizeof(float));
        }
        if (plan.all_stages) {
            head.scores.resize(Tq, Tk);
            head.masked.resize(Tq, Tk);
        }
    }
    return trace;
}

// Head h's relative position bias added to its scores [Tq, Tk]: query row i sits at
// position Tk - Tq + i. The bias of each offset is looked up once.
void add_position_bias(const RelativePositionBias& bias, Eigen::Index h, Matrix& scores) {
    const Eigen::Index Tq = scores.rows();
    const Eigen::Index Tk = scores.cols();
    const Eigen::Index first_query = Tk - Tq;
    // offset j - position in [-(Tk - 1), Tk - 1]
    std::vector<float> by_offset(static_cast<std::size_t>(2 * Tk - 1));
    for (Eigen::Index offset = -(Tk - 1); offset < Tk; ++offset) {
        const Eigen::Index bucket =
            relative_position_bucket(offset, bias.bidirectional, bias.buckets(), bias.max_distance);
        by_offset[static_cast<std::size_t>(offset + Tk - 1)] = bias.table(bucket, h);
    }
    for (Eigen::Index i = 0; i < Tq; ++i) {
        const float* row_bias = by_offset.data() + (Tk - 1) - (first_query + i);   // offset of key 0
        for (Eigen::Index j = 0; j < Tk; ++j) scores(i, j) += row_bias[j];
    }
}

// Head h's map, on one thread: its scores computed straight into `map` ([Tq, Tk],
// allocated), soft-capped, and their softmax; its scores before and after the mask into
// `stages` when kept. `keys` is room for its keys' panels.
void head_weights(const HeadsPlan& plan, Eigen::Index h, Matrix& map, HeadTrace* stages, WeightPanels& keys) {
    const Eigen::Index Dh = plan.Dh;
    const AttentionWeights& w = plan.w;
    const auto qh = plan.q.middleCols(h * Dh, Dh);            // [Tq, Dh]
    const auto kh = plan.k.middleCols(h / plan.G * Dh, Dh);   // [Tk, Dh], its key/value head's
    keys.assign(kh.data(), kh.outerStride(), false);
    if (plan.key_ends.empty() || plan.all_stages) {
        keys.multiply(qh, map, nullptr, plan.scale);
    } else {
        keys.multiply_leading(WeightPanels::Kernel::best, qh, map, plan.key_ends, WeightPanels::Leading::outputs,
                              plan.scale);
    }
    if (w.score_cap != 0.0f) map = (w.score_cap * (map.array() / w.score_cap).tanh()).matrix();
    if (w.position_bias.active()) add_position_bias(w.position_bias, h, map);
    if (stages != nullptr) {
        stages->scores = map;
        constexpr float minus_inf = -std::numeric_limits<float>::infinity();
        if (plan.allowed) {
            stages->masked = plan.allowed->select(stages->scores.array(), minus_inf).matrix();
        } else {
            stages->masked = stages->scores;
        }
        if (plan.options.window > 0) {
            for (Eigen::Index i = 0; i < stages->masked.rows(); ++i) {
                const Eigen::Index from = plan.keys_allowed[static_cast<std::size_t>(i)].window_first;
                stages->masked.row(i).head(std::min(from, stages->masked.cols())).setConstant(minus_inf);
            }
        }
    }
    softmax_rows(map, plan.allowed, plan.keys_allowed);
}

// Head h's context from its map, into its own columns of concat (0 when it is disabled).
// `values` is room for its values' panels.
void head_context(const HeadsPlan& plan, Eigen::Index h, const Matrix& map, Matrix& concat, WeightPanels& values) {
    const Eigen::Index Dh = plan.Dh;
    auto context = concat.middleCols(h * Dh, Dh);
    const std::vector<bool>& disabled_heads = plan.options.disabled_heads;
    if (!disabled_heads.empty() && disabled_heads[static_cast<std::size_t>(h)]) {
        context.setZero();
        return;
    }
    const auto vh = plan.v.middleCols(h / plan.G * Dh, Dh);   // [Tk, Dh]
    values.assign(vh.data(), vh.outerStride(), true);
    if (plan.key_ends.empty()) {
        values.multiply(map, context);
    } else {
        values.multiply_leading(WeightPanels::Kernel::best, map, context, plan.key_ends, WeightPanels::Leading::inputs);
    }
}

// Every head's map and context. Kept maps: each head on one thread, handed out as threads
// come free. Streamed maps (on_map): as many heads at a time as there are threads, each
// into one of that many maps, handed to on_map once the group is done.
void run_heads(const HeadsPlan& plan, AttentionTrace& trace, bool streamed) {
    const Eigen::Index H = plan.w.n_heads;
    const Eigen::Index Tq = plan.q.rows();
    const Eigen::Index Tk = plan.k.rows();
    const Eigen::Index group = streamed ? std::min<Eigen::Index>(H, std::max(1, compute_threads())) : H;
    // Each head's keys and values are laid out for the products as it runs (a copy of a
    // [Tk, Dh] block each, small next to the products); the room for them is made here.
    std::vector<WeightPanels> key_panels;
    std::vector<WeightPanels> value_panels;
    std::vector<Matrix> maps(static_cast<std::size_t>(streamed ? group : 0));
    for (Matrix& map : maps) {
        map.resize(Tq, Tk);
        advise_huge_pages(map.data(), static_cast<std::size_t>(map.size()) * sizeof(float));
    }
    for (Eigen::Index i = 0; i < group; ++i) {
        key_panels.emplace_back(Tk, plan.Dh);     // K_h as the weight [out = keys, in = Dh]
        value_panels.emplace_back(plan.Dh, Tk);   // V_h as W^T: [in = keys, out = Dh]
    }
    const double flops_per_head =
        4.0 * static_cast<double>(Tq) * static_cast<double>(Tk) * static_cast<double>(plan.Dh);
    for (Eigen::Index first = 0; first < H; first += group) {
        const Eigen::Index n = std::min(group, H - first);
        parallel_items(n, flops_per_head * static_cast<double>(n), [&](Eigen::Index i) {
            const Eigen::Index h = first + i;
            if (!computes_head(plan.options, h)) return;
            HeadTrace& head = trace.heads[static_cast<std::size_t>(h)];
            Matrix& map = streamed ? maps[static_cast<std::size_t>(i)] : head.weights;
            head_weights(plan, h, map, plan.all_stages ? &head : nullptr, key_panels[static_cast<std::size_t>(i)]);
            head_context(plan, h, map, trace.concat, value_panels[static_cast<std::size_t>(i)]);
        });
        for (Eigen::Index i = 0; streamed && i < n; ++i)
            plan.options.on_map(first + i, maps[static_cast<std::size_t>(i)]);
    }
}

// The plan of one attend(): G, Dh, the scale and each query's allowed keys.
HeadsPlan make_plan(const AttentionWeights& w, const ConstMatrixRef& q, const ConstMatrixRef& k,
                    const ConstMatrixRef& v, const AttentionOptions& options) {
    const Mask* allowed = options.keep ? &*options.keep : nullptr;
    check_attend_options(options, allowed, w.n_heads, q.rows(), k.rows());
    HeadsPlan plan{w,
                   q,
                   k,
                   v,
                   options,
                   allowed,
                   w.n_heads / w.kv_heads(),
                   w.head_width(),
                   w.scale(),
                   options.detail == TraceDetail::all_stages,
                   {},
                   {}};
    if (allowed || options.window > 0) {
        plan.keys_allowed =
            allowed ? allowed_keys(*allowed)
                    : std::vector<AllowedKeys>(static_cast<std::size_t>(q.rows()), AllowedKeys{0, k.rows(), false});
        narrow_to_window(plan.keys_allowed, options.window, k.rows());
        plan.key_ends.reserve(static_cast<std::size_t>(q.rows()));
        for (const AllowedKeys& row : plan.keys_allowed) plan.key_ends.push_back(row.end);
    }
    return plan;
}

// Q and K before their rotation, kept for the stages (TraceDetail::all_stages).
struct Unrotated {
    Matrix q;   // [Tq, D]
    Matrix k;   // [Tk or Tn, Dkv]: the keys computed in this call
};

// Keys and values a caller assembled for one call (kept rows and new): the trace takes
// them, rather than a copy, where it keeps them (a typed token's run keeps every layer's).
struct OwnKeysValues {
    Matrix* keys = nullptr;
    Matrix* values = nullptr;
};

// The heads, from the projected q [Tq, D], k and v [Tk, D]; x_q is the queries' input
// (kept with TraceDetail::all_stages, with `unrotated` when the weights rotate).
AttentionTrace attend(const AttentionWeights& w, const ConstMatrixRef& x_q, const ConstMatrixRef& q,
                      const ConstMatrixRef& k, const ConstMatrixRef& v, const AttentionOptions& options,
                      const Unrotated& unrotated = {}, OwnKeysValues own = {}) {
    const HeadsPlan plan = make_plan(w, q, k, v, options);
    const bool streamed = options.on_map && !plan.all_stages;
    AttentionTrace trace = allocated_trace(plan, x_q, q.rows(), k.rows(), streamed);
    trace.window = options.window;
    run_heads(plan, trace, streamed);
    if (plan.all_stages) {
        const Eigen::Index G = plan.G;
        const Eigen::Index Dh = plan.Dh;
        for (Eigen::Index h = 0; h < w.n_heads; ++h) {
            if (!computes_head(options, h)) continue;
            HeadTrace& head = trace.heads[static_cast<std::size_t>(h)];
            head.q = q.middleCols(h * Dh, Dh);
            head.k = k.middleCols(h / G * Dh, Dh);
            head.v = v.middleCols(h / G * Dh, Dh);
            head.context = trace.concat.middleCols(h * Dh, Dh);
            if (unrotated.q.size() != 0) {
                head.q_unrotated = unrotated.q.middleCols(h * Dh, Dh);
                head.k_unrotated = unrotated.k.middleCols(h / G * Dh, Dh);
            }
        }
    }
    if (streamed) trace.queries = q;
    trace.output = linear_forward(w.out, trace.concat);
    // Last: `k` and `v` may view the matrices moved here.
    const auto keep = [](Matrix& kept, const ConstMatrixRef& used, Matrix* own) {
        if (own != nullptr) {
            kept = std::move(*own);
        } else {
            kept = used;
        }
    };
    if (options.keep_keys_values || streamed) keep(trace.keys, k, own.keys);
    if (options.keep_keys_values) keep(trace.values, v, own.values);
    return trace;
}

// Self-attention's Q, K and V of x: one product with packed weights ([T, D + 2 Dkv], then
// three column blocks of it), or one over the three weights.
struct Projected {
    Matrix qkv, q, k, v;
    Eigen::Index D = 0;
    Eigen::Index Dkv = 0;
    MatrixRef queries() { return qkv.size() != 0 ? MatrixRef(qkv.leftCols(D)) : MatrixRef(q); }
    MatrixRef keys() { return qkv.size() != 0 ? MatrixRef(qkv.middleCols(D, Dkv)) : MatrixRef(k); }
    MatrixRef values() { return qkv.size() != 0 ? MatrixRef(qkv.rightCols(Dkv)) : MatrixRef(v); }
};

// Each head's Dh features of x [T, n * Dh] normalised in place by `norm` (empty: none).
void norm_heads(const Norm& norm, MatrixRef x, Eigen::Index Dh) {
    if (norm.weight.size() == 0) return;
    for (Eigen::Index c = 0; c < x.cols(); c += Dh) x.middleCols(c, Dh) = norm_forward(norm, x.middleCols(c, Dh));
}

// What turns projected q and k before the scores: per-head norms, then rotary positions
// (queries at `first_query` on, keys at `first_key` on, in a sequence of `length` positions).
void transform_queries_keys(const AttentionWeights& w, MatrixRef q, MatrixRef k, Eigen::Index first_query,
                            Eigen::Index first_key, Eigen::Index length, const AttentionOptions& options,
                            Unrotated& unrotated) {
    const Eigen::Index Dh = w.head_width();
    norm_heads(w.q_norm, q, Dh);
    norm_heads(w.k_norm, k, Dh);
    if (options.detail == TraceDetail::all_stages && w.rotary.active()) {
        unrotated.q = q;
        unrotated.k = k;
    }
    apply_rotary(w.rotary, q, w.n_heads, first_query, length);
    apply_rotary(w.rotary, k, w.kv_heads(), first_key, length);
}

Projected project_self(const AttentionWeights& w, const ConstMatrixRef& x) {
    Projected p;
    p.D = w.inner_width();
    p.Dkv = w.kv_width();
    if (w.qkv.weight.size() != 0 && w.key_width() == w.model_width()) {
        p.qkv = linear_forward(w.qkv, x);
    } else {
        // Three weights (ViT, BERT), still one product: x read and packed once, and the
        // pieces of all three shared out together.
        p.q.resize(x.rows(), p.D);
        p.k.resize(x.rows(), p.Dkv);
        p.v.resize(x.rows(), p.Dkv);
        const auto bias = [](const Linear& layer) { return layer.bias.size() != 0 ? &layer.bias : nullptr; };
        const WeightPanels::Output outputs[] = {{&w.q.weight.panels(), p.q, bias(w.q)},
                                                {&w.k.weight.panels(), p.k, bias(w.k)},
                                                {&w.v.weight.panels(), p.v, bias(w.v)}};
        WeightPanels::multiply_each(x, outputs);
    }
    return p;
}

}   // namespace

AttentionTrace attention_forward(const AttentionWeights& w, const ConstMatrixRef& x_q, const ConstMatrixRef& x_kv,
                                 const AttentionOptions& options) {
    w.validate();
    const Eigen::Index Tq = x_q.rows();
    const Eigen::Index Tk = x_kv.rows();
    if (Tq < 1 || Tk < 1)
        throw Error("attention needs at least one query and one key, got Tq = " + std::to_string(Tq) +
                    ", Tk = " + std::to_string(Tk));
    check_query_width(w, x_q);
    if (x_kv.cols() != w.key_width() || x_kv.cols() != w.value_width()) {
        throw Error("key/value input: expected width " + std::to_string(w.key_width()) +
                    (w.key_width() != w.value_width() ? " for keys and " + std::to_string(w.value_width()) +
                                                            " for values (one input cannot feed both)"
                                                      : std::string()) +
                    ", got " + std::to_string(x_kv.cols()));
    }
    const bool self = x_q.data() == x_kv.data() && Tq == Tk && x_q.outerStride() == x_kv.outerStride();
    if (self) return attention_forward_after(w, x_q, Matrix(), Matrix(), 0, options);   // after no kept position
    Matrix q = linear_forward(w.q, x_q);                                                // [Tq, D]
    Matrix k = linear_forward(w.k, x_kv);                                               // [Tk, Dkv]
    const Matrix v = linear_forward(w.v, x_kv);                                         // [Tk, Dkv]
    Unrotated unrotated;
    transform_queries_keys(w, q, k, 0, 0, std::max(Tq, Tk), options, unrotated);
    return attend(w, x_q, q, k, v, options, unrotated);
}

AttentionTrace attention_forward_after(const AttentionWeights& w, const ConstMatrixRef& x_new, const Matrix& kept_keys,
                                       const Matrix& kept_values, Eigen::Index p, const AttentionOptions& options) {
    w.validate();
    const Eigen::Index Tn = x_new.rows();
    const Eigen::Index D = w.kv_width();
    if (Tn < 1) throw Error("attention after kept positions needs at least one new position");
    check_query_width(w, x_new);
    if (w.key_width() != w.model_width() || w.value_width() != w.model_width()) {
        throw Error("attention after kept positions is self-attention: keys and values must read the queries' input");
    }
    const bool kept_fit = p == 0 || (kept_keys.rows() >= p && kept_values.rows() >= p && kept_keys.cols() == D &&
                                     kept_values.cols() == D);
    if (p < 0 || !kept_fit) {
        throw Error("kept keys and values: expected [>= " + std::to_string(p) + ", " + std::to_string(D) + "], got " +
                    dims(kept_keys.rows(), kept_keys.cols()) + " and " + dims(kept_values.rows(), kept_values.cols()));
    }
    Projected now = project_self(w, x_new);
    Unrotated unrotated;
    transform_queries_keys(w, now.queries(), now.keys(), p, p, p + Tn, options, unrotated);
    // A whole run (no kept position): the keys and values are this call's, as computed.
    if (p == 0) return attend(w, x_new, now.queries(), now.keys(), now.values(), options, unrotated);
    Matrix k(p + Tn, D);
    k.topRows(p) = kept_keys.topRows(p);
    k.bottomRows(Tn) = now.keys();
    Matrix v(p + Tn, D);
    v.topRows(p) = kept_values.topRows(p);
    v.bottomRows(Tn) = now.values();
    return attend(w, x_new, now.queries(), k, v, options, unrotated, {&k, &v});
}

AttentionTrace attention_forward(const AttentionWeights& weights, const ConstMatrixRef& x,
                                 const AttentionOptions& options) {
    return attention_forward(weights, x, x, options);
}

Matrix head_map(const AttentionWeights& w, const AttentionTrace& layer, Eigen::Index h, const OptionalMask& keep) {
    if (h < 0 || h >= w.n_heads || static_cast<Eigen::Index>(layer.heads.size()) != w.n_heads) {
        throw Error("head " + std::to_string(h) + ": the layer has heads 0.." + std::to_string(w.n_heads - 1));
    }
    const HeadTrace& kept = layer.heads[static_cast<std::size_t>(h)];
    if (kept.weights.size() != 0) return kept.weights;
    if (layer.queries.cols() != w.inner_width() || layer.keys.cols() != w.kv_width()) {
        throw Error("head " + std::to_string(h) +
                    ": the run kept neither its map nor the queries and keys to compute it");
    }
    AttentionOptions options;
    options.keep = keep;
    options.window = layer.window;
    // The plan holds references: to these, which outlive it.
    const ConstMatrixRef q = layer.queries;
    const ConstMatrixRef k = layer.keys;
    const Matrix no_values;
    const ConstMatrixRef v = no_values;
    const HeadsPlan plan = make_plan(w, q, k, v, options);
    WeightPanels keys(layer.keys.rows(), plan.Dh);
    Matrix map(layer.queries.rows(), layer.keys.rows());
    // A fresh map of a long input (64 MB at T = 4,096) faulted in 4 KiB at a time took
    // most of the time of computing it again.
    advise_huge_pages(map.data(), static_cast<std::size_t>(map.size()) * sizeof(float));
    head_weights(plan, h, map, nullptr, keys);
    return map;
}

}   // namespace headscope
