#pragma once
// A compiled regular expression, by Oniguruma: the engine Hugging Face's tokenizers use
// for the patterns in tokenizer.json (\p{L}, \p{N}{1,3}, (?i:'s|'t), \s+(?!\S)), with its
// default syntax and UTF-8, so a pattern matches here what it matches there.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headscope::tokenizer {

class OnigRegex {
public:
    // Refused with "<label>: invalid regex \"...\": <Oniguruma's reason>".
    OnigRegex(std::string_view pattern, const std::string& label);
    ~OnigRegex();
    OnigRegex(const OnigRegex&) = delete;
    OnigRegex& operator=(const OnigRegex&) = delete;

    // Every match left to right, not overlapping, as byte spans [begin, end). After an
    // empty match the search moves one character on, as the onig crate's find_iter does.
    std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;
    const std::string& pattern() const { return pattern_; }

private:
    void* regex_ = nullptr;   // OnigRegex; kept opaque so the header does not include oniguruma.h
    std::string pattern_;
};

}   // namespace headscope::tokenizer
