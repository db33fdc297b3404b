#include "core/analysis/head_metrics.h"

#include "core/base/error.h"
#include "core/tensor/parallel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>

namespace headscope {

namespace {

std::string shape_text(Eigen::Index rows, Eigen::Index cols) {
    return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

// What the metrics need that is the same for every head of one input: built once per
// trace, so 144 heads do not recount the mask or rebuild the patch distances 144 times.
struct Prepared {
    Eigen::Index T = 0;
    std::vector<Eigen::Index> n_allowed;   // [T] keys the mask allows per query (T without a mask)
    // [T] one past the last key the mask allows per query: the weights after it are 0, so a
    // causal map's rows are read up to the diagonal only, half the work.
    std::vector<Eigen::Index> row_end;
    Eigen::ArrayXf offsets;              // [T] 0, 1, .., T-1: |i - j| = |offsets - i|
    std::vector<Eigen::Index> special;   // the special positions (few: a dense pass would waste time)
    Eigen::Index n_prefix = 0;           // images: tokens before the patches
    Matrix patch_distance;               // images: [N, N] pixels between patch centres; else empty
    std::vector<std::pair<Eigen::Index, Eigen::Index>> induction;   // (i, j + 1) per repeated token
    bool has_ids = false;
    int top_k = 5;
};

Prepared prepare(Eigen::Index T, const Mask* allowed, const MetricContext& context) {
    if (allowed != nullptr && (allowed->rows() != T || allowed->cols() != T)) {
        throw Error("metrics: the mask is " + shape_text(allowed->rows(), allowed->cols()) + ", the maps " +
                    shape_text(T, T));
    }
    if (!context.ids.empty() && static_cast<Eigen::Index>(context.ids.size()) != T) {
        throw Error("metrics: " + std::to_string(context.ids.size()) + " token ids for maps of " + std::to_string(T) +
                    " positions");
    }
    if (!context.special.empty() && static_cast<Eigen::Index>(context.special.size()) != T) {
        throw Error("metrics: " + std::to_string(context.special.size()) + " special-token flags for maps of " +
                    std::to_string(T) + " positions");
    }
    if (context.top_k < 1) throw Error("metrics: top_k " + std::to_string(context.top_k) + " is below 1");
    Prepared p;
    p.T = T;
    p.top_k = context.top_k;
    p.n_allowed.assign(static_cast<std::size_t>(T), T);
    p.row_end.assign(static_cast<std::size_t>(T), T);
    if (allowed != nullptr) {
        for (Eigen::Index i = 0; i < T; ++i) {
            p.n_allowed[static_cast<std::size_t>(i)] = allowed->row(i).count();
            Eigen::Index end = T;
            while (end > 0 && !(*allowed)(i, end - 1)) --end;
            p.row_end[static_cast<std::size_t>(i)] = end;
        }
    }
    p.offsets = Eigen::ArrayXf::LinSpaced(T, 0.0f, static_cast<float>(T - 1));
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(context.special.size()); ++j) {
        if (context.special[static_cast<std::size_t>(j)]) p.special.push_back(j);
    }
    if (context.grid_width > 0) {
        const Eigen::Index n_patches = static_cast<Eigen::Index>(context.grid_width) * context.grid_height;
        if (context.grid_height < 1 || context.n_prefix_tokens < 0 || context.n_prefix_tokens + n_patches != T) {
            throw Error("metrics: " + std::to_string(context.n_prefix_tokens) + " prefix tokens and a " +
                        std::to_string(context.grid_width) + " x " + std::to_string(context.grid_height) +
                        " patch grid do not make the maps' " + std::to_string(T) + " positions");
        }
        p.n_prefix = context.n_prefix_tokens;
        // Patch p's centre is ((p % width) + 0.5, (p / width) + 0.5) patches; the 0.5
        // cancels in the differences, so whole patch coordinates suffice.
        p.patch_distance.resize(n_patches, n_patches);
        for (Eigen::Index a = 0; a < n_patches; ++a) {
            for (Eigen::Index b = 0; b < n_patches; ++b) {
                const double dx = static_cast<double>(a % context.grid_width - b % context.grid_width);
                const double dy = static_cast<double>(a / context.grid_width - b / context.grid_width);
                p.patch_distance(a, b) = static_cast<float>(std::sqrt(dx * dx + dy * dy) * context.patch_pixels);
            }
        }
    }
    // TransformerLens' induction detector: at a token seen before, an induction head looks
    // at the token that followed its latest earlier occurrence (j + 1 <= i always).
    p.has_ids = !context.ids.empty();
    std::unordered_map<std::int64_t, Eigen::Index> latest;
    for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(context.ids.size()); ++i) {
        const std::int64_t id = context.ids[static_cast<std::size_t>(i)];
        const auto seen = latest.find(id);
        if (seen != latest.end()) p.induction.emplace_back(i, seen->second + 1);
        latest[id] = i;
    }
    return p;
}

// A row's largest entry and the sum of its k largest, without sorting the row (147k rows
// in a 12 x 12 x 1024 trace). The maxima of blocks of 16 come from one vectorised pass;
// the k-th largest block maximum is a lower bound on the k-th largest entry (those k
// maxima are k distinct entries), so every one of the k largest entries sits in a block
// whose maximum reaches that bound: only those few blocks are looked at entry by entry.
struct RowTop {
    float max = 0.0f;
    double top_k = 0.0;
};

class RowTopFinder {
public:
    RowTop operator()(const float* row, Eigen::Index n, int k) {
        constexpr Eigen::Index block = 16;
        const Eigen::Index n_blocks = (n + block - 1) / block;
        block_max_.resize(static_cast<std::size_t>(n_blocks));
        for (Eigen::Index b = 0; b < n_blocks; ++b) {
            const Eigen::Index start = b * block;
            block_max_[static_cast<std::size_t>(b)] =
                start + block <= n ? Eigen::Map<const Eigen::Array<float, block, 1>>(row + start).maxCoeff()
                                   : Eigen::Map<const Eigen::ArrayXf>(row + start, n - start).maxCoeff();
        }
        RowTop top;
        top.max = *std::max_element(block_max_.begin(), block_max_.end());
        if (k >= n) {
            top.top_k = static_cast<double>(Eigen::Map<const Eigen::ArrayXf>(row, n).sum());
            return top;
        }
        float bar = -std::numeric_limits<float>::infinity();
        if (k < n_blocks) {
            scratch_ = block_max_;
            std::nth_element(scratch_.begin(), scratch_.begin() + (k - 1), scratch_.end(), std::greater<float>());
            bar = scratch_[static_cast<std::size_t>(k - 1)];
        }
        candidates_.clear();
        for (Eigen::Index b = 0; b < n_blocks; ++b) {
            if (!(block_max_[static_cast<std::size_t>(b)] >= bar)) continue;
            for (Eigen::Index j = b * block; j < std::min(n, (b + 1) * block); ++j) {
                if (row[j] >= bar) candidates_.push_back(row[j]);
            }
        }
        const auto kth =
            candidates_.begin() + std::min<std::ptrdiff_t>(k, static_cast<std::ptrdiff_t>(candidates_.size()));
        std::nth_element(candidates_.begin(), kth - 1, candidates_.end(), std::greater<float>());
        for (auto it = candidates_.begin(); it != kth; ++it) top.top_k += static_cast<double>(*it);
        return top;
    }

private:
    std::vector<float> block_max_, scratch_, candidates_;   // workspaces, kept between rows
};

// The totals over rows [from, T) of `weights` added to `start` (the totals over rows
// [0, from)), each row's terms in the order measuring every row adds them. `kept`, when
// given, gets the totals after each of the last metric_totals_kept rows.
HeadMetricSums::Totals row_totals(const Matrix& weights, const Prepared& p, HeadMetricSums::Totals t, Eigen::Index from,
                                  HeadMetricSums* kept) {
    const Eigen::Index T = p.T;
    const Eigen::Index n_patches = p.patch_distance.rows();
    const Eigen::Index keep_from = std::max(from, T - metric_totals_kept);
    if (kept != nullptr) {
        kept->first = keep_from;
        kept->at.clear();
        if (keep_from == from) kept->at.push_back(t);
    }
    // The induction pairs are in row order: those of the rows measured here, from the first.
    auto pair = std::lower_bound(
        p.induction.begin(), p.induction.end(), from,
        [](const std::pair<Eigen::Index, Eigen::Index>& a, Eigen::Index row) { return a.first < row; });
    RowTopFinder find_top;
    for (Eigen::Index i = from; i < T; ++i) {
        const Eigen::Index n_keys = p.n_allowed[static_cast<std::size_t>(i)];
        // Text reads a row up to its last allowed key; images' patch distances take it whole.
        const Eigen::Index n = n_patches == 0 ? p.row_end[static_cast<std::size_t>(i)] : T;
        const auto row = weights.row(i).head(n).array();
        // A fully masked row has all-zero weights (softmax_rows): it has no distribution.
        const bool counts = n_keys != 0 && row.sum() > 0.0f;
        for (; pair != p.induction.end() && pair->first == i; ++pair) {
            if (!counts) continue;
            t.induction += static_cast<double>(weights(i, pair->second));
            ++t.induction_rows;
        }
        if (counts) {
            ++t.rows;
            // 0 ln 0 = 0: zeros are clamped inside the log only (0 * ln(tiny) = 0), branch-free.
            const double h = -static_cast<double>((row * row.max(std::numeric_limits<float>::min()).log()).sum());
            t.entropy += h;
            if (n_keys > 1) t.entropy_norm += h / std::log(static_cast<double>(n_keys));
            if (n_patches == 0) {
                t.distance +=
                    static_cast<double>((row * (p.offsets.head(n).transpose() - static_cast<float>(i)).abs()).sum());
                ++t.distance_rows;
            } else if (i >= p.n_prefix) {
                // Images: only patch-to-patch attention, renormalised over the patches; a row
                // with all its weight on the prefix tokens has no distance.
                const auto patches = row.tail(n_patches);
                const float mass = patches.sum();
                if (mass > 0.0f) {
                    t.distance +=
                        static_cast<double>((patches * p.patch_distance.row(i - p.n_prefix).array()).sum() / mass);
                    ++t.distance_rows;
                }
            }
            const RowTop best = find_top(weights.data() + i * T, n, p.top_k);
            t.max_weight += static_cast<double>(best.max);
            t.top_k += best.top_k;
            t.sink += static_cast<double>(weights(i, 0));
            for (const Eigen::Index j : p.special) t.special += static_cast<double>(weights(i, j));
            t.diag += static_cast<double>(weights(i, i));
            if (i >= 1) {
                t.prev += static_cast<double>(weights(i, i - 1));
                ++t.prev_rows;
            }
        }
        if (kept != nullptr && i + 1 >= keep_from) kept->at.push_back(t);
    }
    return t;
}

// The means the metrics are, from the totals over every row.
HeadMetrics metrics_from(const HeadMetricSums::Totals& t, bool has_ids) {
    const auto mean = [](double total, int n) { return n > 0 ? total / n : 0.0; };
    HeadMetrics m;
    m.entropy = mean(t.entropy, t.rows);
    m.entropy_norm = mean(t.entropy_norm, t.rows);
    m.mean_distance = mean(t.distance, t.distance_rows);
    m.max_weight = mean(t.max_weight, t.rows);
    m.top_k_mass = mean(t.top_k, t.rows);
    m.sink_mass = mean(t.sink, t.rows);
    m.special_mass = mean(t.special, t.rows);
    m.diag = mean(t.diag, t.rows);
    m.prev_token = mean(t.prev, t.prev_rows);
    if (has_ids && t.induction_rows > 0) m.induction = t.induction / t.induction_rows;
    return m;
}

void check_map_shape(const Matrix& weights, const Prepared& p) {
    if (weights.rows() != p.T || weights.cols() != p.T) {
        throw Error("metrics: a map is " + shape_text(weights.rows(), weights.cols()) + ", expected " +
                    shape_text(p.T, p.T));
    }
}

HeadMetrics metrics_of(const Matrix& weights, const Prepared& p) {
    check_map_shape(weights, p);
    return metrics_from(row_totals(weights, p, {}, 0, nullptr), p.has_ids);
}

constexpr std::array<std::string_view, metric_count> metric_names = {
    "entropy",      "entropy_norm", "mean_distance", "max_weight", "top_k_mass",   "sink_mass",
    "special_mass", "diag",         "prev_token",    "induction",  "monotonicity",
};

}   // namespace

MetricContext metric_context(const ModelInput& input, const ModelInfo& info) {
    MetricContext c;
    c.ids = input.ids;
    if (input.grid_width > 0) {
        c.grid_width = input.grid_width;
        c.grid_height = input.grid_height;
        c.n_prefix_tokens = input.n_prefix_tokens;
        c.patch_pixels = info.patch_size > 0 ? static_cast<double>(info.patch_size) : 1.0;
        const int T = input.n_prefix_tokens + input.grid_width * input.grid_height;
        c.special.assign(static_cast<std::size_t>(T), false);
        for (int i = 0; i < input.n_prefix_tokens && i < T; ++i) c.special[static_cast<std::size_t>(i)] = true;
        return c;
    }
    // Text: special tokens ([CLS], [SEP]) are the ones with no bytes in the sentence. Token
    // ids typed in (--tokens) come with every span empty, or none: nothing is known to be
    // special then, rather than everything.
    bool any_text = false;
    for (const auto& [begin, end] : input.spans) any_text = any_text || begin != end;
    if (any_text) {
        for (const auto& [begin, end] : input.spans) c.special.push_back(begin == end);
    }
    return c;
}

HeadMetrics compute_head_metrics(const Matrix& weights, const Mask* allowed, const MetricContext& context) {
    if (weights.rows() != weights.cols()) {
        throw Error("metrics: the map is " + shape_text(weights.rows(), weights.cols()) +
                    ", not square (self-attention)");
    }
    return metrics_of(weights, prepare(weights.rows(), allowed, context));
}

HeadMetrics compute_cross_metrics(const Matrix& weights, const std::vector<bool>& key_special, int top_k) {
    const Eigen::Index Tk = weights.cols();
    if (!key_special.empty() && static_cast<Eigen::Index>(key_special.size()) != Tk) {
        throw Error("metrics: " + std::to_string(key_special.size()) + " special-token flags for a map of " +
                    std::to_string(Tk) + " keys");
    }
    if (top_k < 1) throw Error("metrics: top_k " + std::to_string(top_k) + " is below 1");
    HeadMetrics m;
    m.cross = true;
    if (Tk == 0) return m;
    const Eigen::ArrayXf offsets = Eigen::ArrayXf::LinSpaced(Tk, 0.0f, static_cast<float>(Tk - 1));
    RowTopFinder find_top;
    int rows = 0;
    int steps = 0;
    int forward = 0;
    std::optional<double> last_centre;
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        const auto row = weights.row(i).array();
        const float mass = row.sum();
        if (!(mass > 0.0f)) {
            last_centre.reset();   // a row with no distribution breaks the chain of steps
            continue;
        }
        ++rows;
        const double h = -static_cast<double>((row * row.max(std::numeric_limits<float>::min()).log()).sum());
        m.entropy += h;
        if (Tk > 1) m.entropy_norm += h / std::log(static_cast<double>(Tk));
        const RowTop best = find_top(weights.data() + i * Tk, Tk, top_k);
        m.max_weight += static_cast<double>(best.max);
        m.top_k_mass += best.top_k;
        m.sink_mass += static_cast<double>(row(0));
        for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(key_special.size()); ++j) {
            if (key_special[static_cast<std::size_t>(j)]) m.special_mass += static_cast<double>(row(j));
        }
        const double centre = static_cast<double>((row * offsets.transpose()).sum());
        if (last_centre) {
            ++steps;
            if (centre >= *last_centre) ++forward;
        }
        last_centre = centre;
    }
    if (rows > 0) {
        for (double* total : {&m.entropy, &m.entropy_norm, &m.max_weight, &m.top_k_mass, &m.sink_mass, &m.special_mass})
            *total /= rows;
    }
    if (steps > 0) m.monotonicity = static_cast<double>(forward) / steps;
    return m;
}

std::vector<HeadMetrics> compute_model_metrics(const ModelTrace& trace, const MetricContext& context,
                                               std::size_t first_layer, std::vector<HeadMetricSums>* sums,
                                               Eigen::Index from_row) {
    std::vector<HeadMetrics> out;
    if (trace.layers.empty() || trace.layers[0].heads.empty()) return out;
    const Matrix& first = trace.layers[0].heads[0].weights;
    if (first.rows() != first.cols()) {
        throw Error("metrics: the maps are " + shape_text(first.rows(), first.cols()) +
                    ", not square (self-attention)");
    }
    const Prepared p = prepare(first.rows(), trace.mask ? &*trace.mask : nullptr, context);
    // Every map checked first: the heads are then measured on every core (a head toggled
    // at T = 1,000 measures 84 maps of a million cells), and a thread must not throw.
    std::vector<const Matrix*> maps;
    for (std::size_t l = first_layer; l < trace.layers.size(); ++l) {
        for (const HeadTrace& head : trace.layers[l].heads) {
            check_map_shape(head.weights, p);
            maps.push_back(&head.weights);
        }
    }
    const auto n = static_cast<Eigen::Index>(maps.size());
    std::vector<HeadMetricSums::Totals> start(maps.size());
    // The kept totals before row p that this run's last rows still reach: a later edit
    // further back than p can start from them.
    std::vector<std::vector<HeadMetricSums::Totals>> earlier(from_row > 0 ? maps.size() : 0);
    if (from_row > 0) {
        if (sums == nullptr || sums->size() != maps.size() || from_row > p.T) {
            throw Error("metrics: rows from " + std::to_string(from_row) + " need every head's totals through it");
        }
        for (std::size_t i = 0; i < maps.size(); ++i) {
            const HeadMetricSums& kept = (*sums)[i];
            if (kept.through(from_row) == nullptr) {
                throw Error("metrics: a head's totals through row " + std::to_string(from_row) + " were not kept");
            }
            start[i] = *kept.through(from_row);
            for (Eigen::Index c = std::max(p.T - metric_totals_kept, kept.first); c < from_row; ++c)
                earlier[i].push_back(*kept.through(c));
        }
    }
    if (sums != nullptr) {
        sums->resize(maps.size());
        for (HeadMetricSums& head : *sums) head.at.reserve(static_cast<std::size_t>(metric_totals_kept) + 1);
    }
    out.resize(maps.size());
    const double rows = static_cast<double>(p.T - from_row);
    parallel_items(n, 20.0 * rows * static_cast<double>(p.T) * static_cast<double>(n), [&](Eigen::Index i) {
        const auto at = static_cast<std::size_t>(i);
        HeadMetricSums* kept = sums != nullptr ? &(*sums)[at] : nullptr;
        out[at] = metrics_from(row_totals(*maps[at], p, start[at], from_row, kept), p.has_ids);
    });
    for (std::size_t i = 0; i < earlier.size(); ++i) {
        HeadMetricSums& head = (*sums)[i];
        head.at.insert(head.at.begin(), earlier[i].begin(), earlier[i].end());
        head.first -= static_cast<Eigen::Index>(earlier[i].size());
    }
    std::size_t at = 0;
    for (std::size_t l = first_layer; l < trace.layers.size(); ++l) {
        for (std::size_t h = 0; h < trace.layers[l].heads.size(); ++h, ++at) {
            out[at].layer = static_cast<int>(l);
            out[at].head = static_cast<int>(h);
        }
    }
    return out;
}

std::string_view metric_name(Metric metric) { return metric_names[static_cast<std::size_t>(metric)]; }

std::optional<Metric> metric_from_name(std::string_view name) {
    for (std::size_t i = 0; i < metric_names.size(); ++i) {
        if (metric_names[i] == name) return static_cast<Metric>(i);
    }
    return std::nullopt;
}

std::optional<double> metric_value(const HeadMetrics& m, Metric metric) {
    const bool positional = metric == Metric::mean_distance || metric == Metric::diag || metric == Metric::prev_token ||
                            metric == Metric::induction;
    if (m.cross && positional) return std::nullopt;
    switch (metric) {
    case Metric::entropy: return m.entropy;
    case Metric::entropy_norm: return m.entropy_norm;
    case Metric::mean_distance: return m.mean_distance;
    case Metric::max_weight: return m.max_weight;
    case Metric::top_k_mass: return m.top_k_mass;
    case Metric::sink_mass: return m.sink_mass;
    case Metric::special_mass: return m.special_mass;
    case Metric::diag: return m.diag;
    case Metric::prev_token: return m.prev_token;
    case Metric::induction: return m.induction;
    case Metric::monotonicity: return m.monotonicity;
    }
    return std::nullopt;
}

}   // namespace headscope
