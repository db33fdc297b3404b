#include "app/gui/preview_layer.h"

#include "core/error.h"

#include <cmath>
#include <random>

namespace headscope::gui {

namespace {

// FNV-1a: a stable hash, so a word's embedding is the same in every run.
std::uint32_t fnv1a(const std::string& text) {
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 16777619u;
    }
    return hash;
}

Linear seeded_linear(Eigen::Index out, Eigen::Index in, std::mt19937& rng) {
    // N(0, 1/in) keeps q.k / sqrt(Dh) near unit variance: maps neither flat nor one-hot.
    std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(in)));
    Linear layer;
    layer.weight.resize(out, in);
    for (Eigen::Index i = 0; i < layer.weight.size(); ++i) layer.weight.data()[i] = normal(rng);
    layer.bias = Vector::Zero(out);
    return layer;
}

} // namespace

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> words;
    std::string current;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            if (!current.empty()) words.push_back(std::move(current));
            current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty()) words.push_back(std::move(current));
    return words;
}

PreviewLayer::PreviewLayer(std::uint32_t seed) : seed_(seed) {
    std::mt19937 rng(seed);
    weights_.n_heads = n_heads;
    weights_.q = seeded_linear(model_width, model_width, rng);
    weights_.k = seeded_linear(model_width, model_width, rng);
    weights_.v = seeded_linear(model_width, model_width, rng);
    weights_.out = seeded_linear(model_width, model_width, rng);
}

Matrix PreviewLayer::embed(const std::vector<std::string>& tokens) const {
    const auto T = static_cast<Eigen::Index>(tokens.size());
    Matrix x(T, model_width);
    for (Eigen::Index t = 0; t < T; ++t) {
        std::mt19937 rng(fnv1a(tokens[static_cast<std::size_t>(t)]) ^ seed_);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (Eigen::Index c = 0; c < model_width; ++c) {
            // Sinusoidal position encoding (Vaswani et al. 2017): sin on even, cos on odd channels.
            const float rate = std::pow(10000.0f, -static_cast<float>(c - c % 2) / static_cast<float>(model_width));
            const float angle = static_cast<float>(t) * rate;
            x(t, c) = normal(rng) + (c % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    }
    return x;
}

PreviewResult PreviewLayer::run(const PreviewRequest& request) const {
    PreviewResult result;
    result.tokens = split_words(request.text);
    if (result.tokens.empty()) throw Error("the sentence is empty: type at least one word");
    if (result.tokens.size() > max_tokens) {
        throw Error("the sentence has " + std::to_string(result.tokens.size()) + " words; this preview layer takes at most " +
                    std::to_string(max_tokens));
    }
    const auto T = static_cast<Eigen::Index>(result.tokens.size());
    AttentionOptions options;
    options.detail = TraceDetail::all_stages;
    options.disabled_heads = request.disabled_heads;
    if (request.causal) options.keep = mask_causal(T, T);
    result.mask = options.keep;
    result.trace = attention_forward(weights_, embed(result.tokens), options);
    return result;
}

} // namespace headscope::gui
