#pragma once
// SentencePiece's compiled normalisation rules ("Precompiled" in tokenizer.json, T5's and
// every SentencePiece converter's normalizer; nmt_nfkc is the usual one): a double-array
// trie (darts-clone) from UTF-8 sequences to what they become, and the replacement strings.
// The text is rewritten as SentencePiece's Normalizer::NormalizePrefix does: at each place
// the longest sequence the trie holds is replaced, else one character is kept as it is.

#include "core/text/tokenizer/json_field.h"
#include "core/text/tokenizer/normalizers.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::tokenizer {

class PrecompiledCharsmap {
public:
    // The map's bytes: a little-endian uint32 trie size, the trie's units, the strings.
    // Throws headscope::Error naming what is wrong with them.
    explicit PrecompiledCharsmap(std::string_view bytes);

    struct Match {
        std::size_t length = 0;     // bytes of the input replaced
        std::string_view becomes;   // what they become
    };
    // The longest rule that `text` starts with, or nullopt.
    std::optional<Match> longest_prefix(std::string_view text) const;
    void normalize(NormalizedText& text) const;

private:
    std::vector<std::uint32_t> units_;
    std::string strings_;
};

// {"type": "Precompiled", "precompiled_charsmap": "<base64>"}; an empty or null map changes nothing.
std::unique_ptr<Normalizer> read_precompiled_normalizer(const JsonField& field);

// Standard base64 (RFC 4648, padded or not) as bytes; nullopt for anything else.
std::optional<std::string> decode_base64(std::string_view text);

}   // namespace headscope::tokenizer
