#pragma once
// Added tokens ("added_tokens": [...]): strings kept whole wherever they appear in the
// text, with their own ids ("<|im_start|>", "<s>", Gemma's "<start_of_turn>"). As
// Hugging Face matches them: tokens with normalized = false are found in the raw text
// first; the stretches between are normalized, and tokens with normalized = true are
// found in that normalized text. Leftmost match first, the longest of those starting
// there; single_word tokens only between non-word characters; lstrip / rstrip take the
// whitespace beside them into the token.

#include "core/text/tokenizer/json_field.h"
#include "core/text/tokenizer/normalizers.h"
#include "core/text/tokenizer/pre_tokenizers.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace headscope::tokenizer {

struct AddedToken {
    std::string content;
    std::int32_t id = 0;
    bool special = false;
    bool single_word = false;
    bool lstrip = false;
    bool rstrip = false;
    bool normalized = true;
};

// Finds any of a set of strings, leftmost-longest, by a byte trie.
class TokenMatcher {
public:
    void add(std::string_view text, std::size_t token_index);
    bool empty() const { return nodes_.size() <= 1; }
    // The longest string starting at `at`, as (token index, length).
    std::optional<std::pair<std::size_t, std::size_t>> longest_at(std::string_view text, std::size_t at) const;

private:
    struct Node {
        std::vector<std::pair<unsigned char, std::uint32_t>> children;   // sorted by byte
        std::optional<std::size_t> token;
    };
    std::vector<Node> nodes_ = std::vector<Node>(1);
    std::array<bool, 256> starts_{};
};

class AddedTokens {
public:
    AddedTokens() = default;
    // `normalizer` (may be null) gives normalized tokens the form they are matched in.
    AddedTokens(std::vector<AddedToken> tokens, const Normalizer* normalizer);
    static std::vector<AddedToken> read(const JsonField& field);

    // The input as pieces: added tokens found (with their ids), the rest normalized.
    std::vector<Piece> extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;

    const std::vector<AddedToken>& tokens() const { return tokens_; }
    const AddedToken* by_id(std::int32_t id) const;
    const AddedToken* by_content(std::string_view content) const;

private:
    void split(std::vector<Piece>& pieces, const TokenMatcher& matcher) const;

    std::vector<AddedToken> tokens_;
    std::unordered_map<std::int32_t, std::size_t> by_id_;
    TokenMatcher raw_matcher_;          // normalized = false, matched in the input
    TokenMatcher normalized_matcher_;   // normalized = true, matched after normalization
};

}   // namespace headscope::tokenizer
