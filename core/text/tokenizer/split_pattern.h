#pragma once
// Cutting text where a pattern matches, as Hugging Face's tokenizers do it: a pattern
// (a regex, a literal string or a character class) gives the text as consecutive
// stretches, each a match or not, and a behaviour says what becomes of the matches:
// removed, isolated as pieces of their own, merged into the piece before or after, or
// runs of matches kept together (contiguous).

#include "core/text/tokenizer/normalized_text.h"
#include "core/text/tokenizer/onig_regex.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::tokenizer {

struct Stretch {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool is_match = false;
};
// Consecutive stretches covering the text; an empty text is one empty non-match.
using Stretches = std::vector<Stretch>;

Stretches stretches_of(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& matches);
Stretches stretches_of(std::string_view text, const std::function<bool(char32_t)>& is_match);

// A regex or a literal string, as tokenizer.json writes {"Regex": ...} or {"String": ...}.
class SplitPattern {
public:
    static SplitPattern regex(std::string_view pattern, const std::string& label);
    static SplitPattern literal(std::string_view text);

    std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;
    Stretches stretches(std::string_view text) const { return stretches_of(text, find_all(text)); }

private:
    std::shared_ptr<const OnigRegex> regex_;   // shared: a tokenizer may be copied
    std::string literal_;
};

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

// The pieces `text` is cut into (empty pieces dropped); `invert` swaps matches and the rest.
std::vector<NormalizedText> split_text(const NormalizedText& text, Stretches stretches, SplitBehavior behavior,
                                       bool invert = false);

}   // namespace headscope::tokenizer
