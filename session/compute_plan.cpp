#include "session/compute_plan.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace headscope::session {

namespace {

// FNV-1a, continuing from `hash`, over 8-byte words and then the bytes left: a word at a
// time, a 1,000-token input's 3 MB of embeddings are hashed in a fraction of a millisecond
// (byte by byte: 5 ms on every typed character).
std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = 14695981039346656037ull) {
    constexpr std::uint64_t prime = 1099511628211ull;
    const auto* bytes = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + sizeof(std::uint64_t) <= size; i += sizeof(std::uint64_t)) {
        std::uint64_t word = 0;
        std::memcpy(&word, bytes + i, sizeof word);
        hash = (hash ^ word) * prime;
        hash ^= hash >> 29;   // the word's high bits reach the low ones, as bytes' would
    }
    for (; i < size; ++i) hash = (hash ^ bytes[i]) * prime;
    return hash;
}

bool keeps_every_layer(const LastRun& last, Eigen::Index n_layers) {
    return last.trace != nullptr && static_cast<Eigen::Index>(last.trace->layer_inputs.size()) == n_layers;
}

// The first position whose embedding differs between two inputs of the same width.
Eigen::Index common_prefix(const Matrix& now, const Matrix& before) {
    if (now.cols() != before.cols()) return 0;
    Eigen::Index same = 0;
    while (same < now.rows() && same < before.rows() && now.row(same) == before.row(same)) ++same;
    return same;
}

}   // namespace

bool RunKey::operator==(const RunKey& other) const {
    return causal == other.causal && forbidden == other.forbidden && label_ids == other.label_ids &&
           source_ids == other.source_ids && embeddings.rows() == other.embeddings.rows() &&
           embeddings.cols() == other.embeddings.cols() && embeddings == other.embeddings;
}

RunKey run_key(const ModelInput& input, bool causal, const std::vector<std::pair<int, int>>& forbidden) {
    RunKey key{input.embeddings, causal, forbidden, {}, {}};
    for (const ModelInput& label : input.prompts) key.label_ids.push_back(label.ids);
    if (input.source) key.source_ids = input.source->ids;
    return key;
}

std::string input_key_text(const ModelChoice& model, const RunKey& key) {
    const ToyConfig& c = model.config;
    const std::int64_t numbers[] = {c.width,
                                    c.n_heads,
                                    c.n_layers,
                                    c.mlp_ratio,
                                    c.max_tokens,
                                    c.image_size,
                                    c.patch_size,
                                    c.bias,
                                    static_cast<std::int64_t>(c.seed),
                                    static_cast<std::int64_t>(c.init),
                                    static_cast<std::int64_t>(c.arch),
                                    key.causal,
                                    key.embeddings.rows(),
                                    key.embeddings.cols()};
    std::uint64_t hash = fnv1a(numbers, sizeof numbers);
    hash = fnv1a(key.embeddings.data(), static_cast<std::size_t>(key.embeddings.size()) * sizeof(float), hash);
    for (const auto& pair : key.forbidden) hash = fnv1a(&pair, sizeof pair, hash);
    const auto add_ids = [&hash](const std::vector<std::int64_t>& ids) {
        // each list's length too: "1,2" + "3" is not "1" + "2,3"
        const auto n = static_cast<std::int64_t>(ids.size());
        hash = fnv1a(&n, sizeof n, hash);
        hash = fnv1a(ids.data(), ids.size() * sizeof(std::int64_t), hash);
    };
    for (const auto& ids : key.label_ids) add_ids(ids);
    add_ids(key.source_ids);   // an encoder-decoder's source: the same target over another source differs
    char text[24];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return model.name + " " + text;
}

ReusePlan plan_reuse(const LastRun& last, const RunKey& key, const RunOptions& options, Eigen::Index n_layers) {
    ReusePlan plan;
    if (last.key == nullptr || last.options == nullptr || !keeps_every_layer(last, n_layers)) return plan;
    if (*last.key == key) {
        // Toggling a head redoes only its layer and those after it.
        Eigen::Index first = first_difference(last.options->disabled_heads, options.disabled_heads, n_layers);
        // A layer whose stages were kept, or now are, changes too.
        const Eigen::Index had = last.options->stages_layer;
        if (had != options.stages_layer) {
            for (const Eigen::Index l : {had, options.stages_layer}) {
                if (l >= 0) first = std::min(first, l);
            }
        }
        plan.resume = true;
        plan.resume_layer = std::min(first, n_layers - 1);
        return plan;
    }
    // Text typed or edited at its end, on a causal model: the positions before the first
    // changed one are the last run's (GPT-2 computes only the rest).
    const bool same_run = key.causal && last.key->causal && key.forbidden.empty() && last.key->forbidden.empty() &&
                          last.options->disabled_heads == options.disabled_heads &&
                          last.options->stages_layer == options.stages_layer;
    if (!same_run) return plan;
    const Eigen::Index same = common_prefix(key.embeddings, last.key->embeddings);
    if (same > 0 && same < key.embeddings.rows()) plan.prefix_rows = same;
    return plan;
}

void apply_reuse(const ReusePlan& plan, const LastRun& last, RunOptions& options) {
    if (plan.resume) {
        options.resume_from = last.trace;
        options.resume_layer = plan.resume_layer;
    } else if (plan.prefix_rows > 0) {
        options.prefix_from = last.trace;
        options.prefix_rows = plan.prefix_rows;
    }
}

}   // namespace headscope::session
