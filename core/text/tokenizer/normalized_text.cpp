#include "core/text/tokenizer/normalized_text.h"

namespace headscope::tokenizer {

NormalizedText::NormalizedText(std::string_view original, std::size_t offset)
    : text_(original), whole_{static_cast<std::uint32_t>(offset),
                              static_cast<std::uint32_t>(offset + original.size())} {
    align_.reserve(text_.size());
    for (std::size_t at = 0; at < text_.size();) {
        const std::size_t length = decode_char(text_, at).length;
        const Span span{static_cast<std::uint32_t>(offset + at), static_cast<std::uint32_t>(offset + at + length)};
        align_.insert(align_.end(), length, span);
        at += length;
    }
}

Span NormalizedText::original_span(std::size_t begin, std::size_t end) const {
    if (begin >= end) {
        const std::uint32_t at = begin < align_.size() ? align_[begin].begin : whole_.end;
        return {at, at};
    }
    return {align_[begin].begin, align_[end - 1].end};
}

NormalizedText NormalizedText::slice(std::size_t begin, std::size_t end) const {
    NormalizedText part;
    part.text_ = text_.substr(begin, end - begin);
    part.align_.assign(align_.begin() + static_cast<std::ptrdiff_t>(begin),
                       align_.begin() + static_cast<std::ptrdiff_t>(end));
    part.whole_ = original_span(begin, end);
    return part;
}

void NormalizedText::Builder::add(char32_t c, Span from) {
    const std::size_t before = text_.size();
    append_utf8(text_, c);
    align_.insert(align_.end(), text_.size() - before, from);
}

void NormalizedText::Builder::add_bytes(std::string_view utf8, Span from) {
    text_.append(utf8);
    align_.insert(align_.end(), utf8.size(), from);
}

void NormalizedText::assign(Builder&& built) {
    text_ = std::move(built.text_);
    align_ = std::move(built.align_);
}

void NormalizedText::keep(std::size_t begin, std::size_t end) {
    text_ = text_.substr(begin, end - begin);
    align_.erase(align_.begin() + static_cast<std::ptrdiff_t>(end), align_.end());
    align_.erase(align_.begin(), align_.begin() + static_cast<std::ptrdiff_t>(begin));
}

void NormalizedText::prepend(std::string_view prefix) {
    const std::uint32_t at = align_.empty() ? whole_.begin : align_.front().begin;
    text_.insert(0, prefix);
    align_.insert(align_.begin(), prefix.size(), Span{at, at});
}

}   // namespace headscope::tokenizer
