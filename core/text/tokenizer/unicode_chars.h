#pragma once
// Characters as Hugging Face's tokenizers (Rust) classify them, from utf8proc's tables:
// Rust's char::is_whitespace, the regex crate's \w, the punctuation and control classes
// the BERT and Punctuation pre-tokenizers use. Text here is valid UTF-8 (checked once on
// the way in), so decoding does not check again.

#include <cstddef>
#include <string>
#include <string_view>

namespace headscope::tokenizer {

struct DecodedChar {
    char32_t c = 0;
    std::size_t length = 0;   // bytes
};

// The character starting at byte `at` of valid UTF-8.
DecodedChar decode_char(std::string_view text, std::size_t at);
// The start of the last character of non-empty valid UTF-8.
std::size_t last_char_start(std::string_view text);
void append_utf8(std::string& out, char32_t c);
std::string utf8_of(char32_t c);

bool is_white_space(char32_t c);      // Unicode White_Space (Rust's char::is_whitespace)
bool is_letter_or_mark(char32_t c);   // Unicode L* or M*
bool is_word_char(char32_t c);        // \w: letters, marks, decimal digits, connectors, ZWNJ/ZWJ
bool is_punctuation(char32_t c);      // ASCII punctuation or Unicode P*
bool is_control(char32_t c);          // Unicode C*, except tab, newline and carriage return
bool is_combining_mark(char32_t c);   // Mn (what strip_accents removes after NFD)
bool is_cjk_ideograph(char32_t c);    // the blocks BERT puts spaces around

}   // namespace headscope::tokenizer
