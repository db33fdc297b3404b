#pragma once
// Text on its way through a tokenizer, as Hugging Face's NormalizedString keeps it: the
// current (normalized) UTF-8, and for each of its bytes the span of the original input it
// came from. Normalizers rewrite it character by character, pre-tokenizers cut it into
// pieces, and a token's span in the input is read back from the bytes it covers, so the
// window can underline what each token stands for.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::tokenizer {

struct Span {
    std::uint32_t begin = 0;   // bytes [begin, end) of the original input
    std::uint32_t end = 0;
};

class NormalizedText {
public:
    NormalizedText() = default;
    // `original` unchanged, byte i aligned to byte offset + i of the whole input.
    NormalizedText(std::string_view original, std::size_t offset);

    const std::string& text() const { return text_; }
    bool empty() const { return text_.empty(); }
    // Where this text lies in the original input, whatever it has become since.
    Span whole() const { return whole_; }
    // The original bytes that normalized bytes [begin, end) came from.
    Span original_span(std::size_t begin, std::size_t end) const;
    // Normalized bytes [begin, end) and their alignment.
    NormalizedText slice(std::size_t begin, std::size_t end) const;

    // Rewrites the text one character at a time: for each character (with the original
    // span it came from), `rewrite(c, span, out)` appends what it becomes.
    class Builder {
    public:
        void add(char32_t c, Span from);
        void add_bytes(std::string_view utf8, Span from);

    private:
        friend class NormalizedText;
        std::string text_;
        std::vector<Span> align_;
    };
    template <typename Rewrite>
    void rewrite_chars(Rewrite&& rewrite);
    // Replaces the text with what a builder holds.
    void assign(Builder&& built);
    // Keeps bytes [begin, end) only; where the text lies in the input (whole()) stays.
    void keep(std::size_t begin, std::size_t end);
    // Adds `prefix` in front, standing for no original bytes (an empty span where the text starts).
    void prepend(std::string_view prefix);
    // Each character's original span, in order (what rewrite_chars passes).
    Span char_span(std::size_t byte) const { return align_[byte]; }

private:
    std::string text_;
    std::vector<Span> align_;   // one per byte of text_
    Span whole_;
};

}   // namespace headscope::tokenizer

#include "core/text/tokenizer/unicode_chars.h"

namespace headscope::tokenizer {

template <typename Rewrite>
void NormalizedText::rewrite_chars(Rewrite&& rewrite) {
    Builder out;
    out.text_.reserve(text_.size());
    out.align_.reserve(text_.size());
    for (std::size_t at = 0; at < text_.size();) {
        const DecodedChar d = decode_char(text_, at);
        rewrite(d.c, align_[at], out);
        at += d.length;
    }
    assign(std::move(out));
}

}   // namespace headscope::tokenizer
