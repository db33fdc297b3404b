#pragma once
// What the window shows until the demo models and tokenizers land (issue 3): one
// multi-head attention layer with seeded random weights, run on the words of a
// sentence. Each distinct word gets a seeded random embedding plus a sinusoidal
// position encoding, so repeated words attend alike and order still matters.

#include "core/attention.h"

#include <cstdint>
#include <string>
#include <vector>

namespace headscope::gui {

struct PreviewRequest {
    std::string text;
    bool causal = false;
    std::vector<bool> disabled_heads;   // [H]
    bool operator==(const PreviewRequest&) const = default;
};

struct PreviewResult {
    std::vector<std::string> tokens;   // [T]
    OptionalMask mask;                 // [T, T] when causal
    AttentionTrace trace;              // all stages
};

class PreviewLayer {
public:
    static constexpr Eigen::Index model_width = 32;   // E
    static constexpr Eigen::Index n_heads = 4;        // H
    static constexpr std::size_t max_tokens = 512;

    explicit PreviewLayer(std::uint32_t seed);

    // Throws headscope::Error for an empty sentence or one over max_tokens words.
    PreviewResult run(const PreviewRequest& request) const;

private:
    Matrix embed(const std::vector<std::string>& tokens) const;   // [T, E]

    std::uint32_t seed_;
    AttentionWeights weights_;
};

// Splits on ASCII whitespace; the words keep their bytes (UTF-8 stays intact).
std::vector<std::string> split_words(const std::string& text);

} // namespace headscope::gui
