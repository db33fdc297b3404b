#pragma once
// Text in: UTF-8 validation and the demo models' word tokenizer. Tokens are words and
// punctuation; each keeps the byte span it came from, so views can highlight it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headscope {

struct TextToken {
    std::string text;        // the token's bytes, as in the input
    std::size_t begin = 0;   // byte span [begin, end) in the input
    std::size_t end = 0;
};

// Throws headscope::Error "<label>: invalid UTF-8 at byte N" on the first bad sequence
// (overlong forms, surrogates and code points past U+10FFFF count as bad).
void validate_utf8(std::string_view text, const std::string& label);

// A sentence kept in a file (headscope-cli --text-file): its bytes, one final line end
// dropped. Refused, naming the file, when it is missing or over 16 MiB, or holds a NUL
// byte or invalid UTF-8 (models would read a NUL as text, and no one types one).
std::string read_sentence_file(const std::string& path);

// Splits UTF-8 text into tokens, working on grapheme clusters (so accented letters,
// combining marks and emoji sequences stay whole):
//  - runs of letters, marks and digits form one word (accented letters included);
//  - each CJK ideograph is a token of its own (they are written without spaces);
//  - each punctuation mark, symbol or emoji is a token of its own;
//  - whitespace separates tokens and is dropped; every other byte lands in a token.
// Throws headscope::Error on invalid UTF-8 (`label` names the input in the message).
std::vector<TextToken> tokenize_words(std::string_view text, const std::string& label = "text");

// Splits `text` around its special tokens (e.g. "<|endoftext|>", "[SEP]") as Hugging
// Face's added tokens do: repeatedly the earliest occurrence, ties going to the one
// listed first (so list longer ones first). Calls on_text(begin, end) for each stretch
// of ordinary text (possibly empty) and on_special(special, begin) for each special.
using SpecialToken = std::pair<std::string, std::int32_t>;   // text, id
void split_on_specials(std::string_view text, const std::vector<SpecialToken>& specials,
                       const std::function<void(std::size_t, std::size_t)>& on_text,
                       const std::function<void(const SpecialToken&, std::size_t)>& on_special);

}   // namespace headscope
