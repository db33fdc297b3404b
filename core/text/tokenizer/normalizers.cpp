#include "core/text/tokenizer/normalizers.h"

#include "core/text/tokenizer/precompiled_charsmap.h"
#include "core/text/tokenizer/split_pattern.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <utf8proc.h>

#include <cstdlib>
#include <vector>

namespace headscope::tokenizer {

namespace {

utf8proc_option_t options_of(UnicodeForm form) {
    switch (form) {
    case UnicodeForm::nfc: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    case UnicodeForm::nfd: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    case UnicodeForm::nfkc: return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case UnicodeForm::nfkd:
        return static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
    }
    return UTF8PROC_STABLE;
}

// Where a normalization chunk may start: a character that never combines with the one
// before it (combining class 0, not a mark, not a Hangul vowel or final jamo). Chunks
// normalize independently, so each result character takes its chunk's span.
bool starts_chunk(char32_t c) {
    if (c < 0x80) return true;
    if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2)) return false;
    const auto* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
    const bool mark = p->category == UTF8PROC_CATEGORY_MN || p->category == UTF8PROC_CATEGORY_MC ||
                      p->category == UTF8PROC_CATEGORY_ME;
    return p->combining_class == 0 && !mark;
}

void add_normalized_chunk(std::string_view chunk, Span span, utf8proc_option_t options, NormalizedText::Builder& out) {
    if (chunk.size() == 1) {   // ASCII is the same in every form
        out.add_bytes(chunk, span);
        return;
    }
    utf8proc_uint8_t* mapped = nullptr;
    const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(chunk.data()),
                                static_cast<utf8proc_ssize_t>(chunk.size()), &mapped, options);
    if (n < 0) {   // cannot happen on valid UTF-8; keep the text as it is
        out.add_bytes(chunk, span);
        return;
    }
    out.add_bytes(std::string_view(reinterpret_cast<const char*>(mapped), static_cast<std::size_t>(n)), span);
    std::free(mapped);
}

class UnicodeNormalizer : public Normalizer {
public:
    explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}
    void normalize(NormalizedText& text) const override { normalize_unicode(text, form_); }

private:
    UnicodeForm form_;
};

class LowercaseNormalizer : public Normalizer {
public:
    void normalize(NormalizedText& text) const override { lowercase(text); }
};

class StripNormalizer : public Normalizer {
public:
    StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
    void normalize(NormalizedText& text) const override {
        const std::string& s = text.text();
        std::size_t begin = 0, end = s.size();
        if (left_) {
            while (begin < end && is_white_space(decode_char(s, begin).c)) begin += decode_char(s, begin).length;
        }
        if (right_) {
            while (end > begin && is_white_space(decode_char(s, last_char_start(s.substr(0, end))).c)) {
                end = last_char_start(s.substr(0, end));
            }
        }
        text.keep(begin, end);
    }

private:
    bool left_, right_;
};

class ReplaceNormalizer : public Normalizer {
public:
    ReplaceNormalizer(SplitPattern pattern, std::string content)
        : pattern_(std::move(pattern)), content_(std::move(content)) {}
    void normalize(NormalizedText& text) const override {
        const std::string& s = text.text();
        const auto matches = pattern_.find_all(s);
        if (matches.empty()) return;
        NormalizedText::Builder out;
        std::size_t at = 0;
        for (const auto& [begin, end] : matches) {
            for (; at < begin; ++at) out.add_bytes(std::string_view(s).substr(at, 1), text.char_span(at));
            out.add_bytes(content_, text.original_span(begin, end));
            at = end;
        }
        for (; at < s.size(); ++at) out.add_bytes(std::string_view(s).substr(at, 1), text.char_span(at));
        text.assign(std::move(out));
    }

private:
    SplitPattern pattern_;
    std::string content_;
};

class PrependNormalizer : public Normalizer {
public:
    explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
    void normalize(NormalizedText& text) const override {
        if (!text.empty()) text.prepend(prefix_);
    }

private:
    std::string prefix_;
};

class BertNormalizer : public Normalizer {
public:
    explicit BertNormalizer(const BertNormalizerOptions& options) : options_(options) {}
    void normalize(NormalizedText& text) const override {
        if (options_.clean_text || options_.handle_chinese_chars) {
            text.rewrite_chars([&](char32_t c, Span span, NormalizedText::Builder& out) {
                if (options_.clean_text) {
                    if (c == 0 || c == 0xFFFD || is_control(c)) return;
                    if (c == '\t' || c == '\n' || c == '\r' || is_white_space(c)) c = ' ';
                }
                const bool spaced = options_.handle_chinese_chars && is_cjk_ideograph(c);
                if (spaced) out.add(' ', span);
                out.add(c, span);
                if (spaced) out.add(' ', span);
            });
        }
        if (options_.strip_accents.value_or(options_.lowercase)) {
            normalize_unicode(text, UnicodeForm::nfd);
            text.rewrite_chars([](char32_t c, Span span, NormalizedText::Builder& out) {
                if (!is_combining_mark(c)) out.add(c, span);
            });
        }
        if (options_.lowercase) lowercase(text);
    }

private:
    BertNormalizerOptions options_;
};

class SequenceNormalizer : public Normalizer {
public:
    explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
    void normalize(NormalizedText& text) const override {
        for (const auto& step : steps_) step->normalize(text);
    }

private:
    std::vector<std::unique_ptr<Normalizer>> steps_;
};

SplitPattern read_pattern(const JsonField& field) {
    if (const auto regex = field.find("Regex"))
        return SplitPattern::regex(regex->string(), field.file() + ": " + regex->path());
    if (const auto literal = field.find("String")) return SplitPattern::literal(literal->string());
    field.expected("{\"String\": ...} or {\"Regex\": ...}");
}

}   // namespace

void normalize_unicode(NormalizedText& text, UnicodeForm form) {
    const std::string& s = text.text();
    const utf8proc_option_t options = options_of(form);
    NormalizedText::Builder out;
    std::size_t chunk_begin = 0;
    Span chunk_span{};
    for (std::size_t at = 0; at <= s.size();) {
        const bool end = at == s.size();
        const DecodedChar d = end ? DecodedChar{} : decode_char(s, at);
        if (end || (at > chunk_begin && starts_chunk(d.c))) {
            if (at > chunk_begin)
                add_normalized_chunk(std::string_view(s).substr(chunk_begin, at - chunk_begin), chunk_span, options,
                                     out);
            if (end) break;
            chunk_begin = at;
            chunk_span = text.char_span(at);
        }
        if (at == chunk_begin) chunk_span = text.char_span(at);
        const Span span = text.char_span(at);
        chunk_span.begin = std::min(chunk_span.begin, span.begin);
        chunk_span.end = std::max(chunk_span.end, span.end);
        at += d.length;
    }
    text.assign(std::move(out));
}

void lowercase(NormalizedText& text) {
    text.rewrite_chars([](char32_t c, Span span, NormalizedText::Builder& out) {
        if (c < 0x80) {
            out.add(c >= 'A' && c <= 'Z' ? c + 32 : c, span);
        } else if (c == 0x130) {   // Rust's to_lowercase: İ becomes i and a combining dot
            out.add('i', span);
            out.add(0x307, span);
        } else {
            out.add(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))), span);
        }
    });
}

std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options) {
    return std::make_unique<BertNormalizer>(options);
}

std::unique_ptr<Normalizer> read_normalizer(const JsonField& field) {
    const std::string type = field.type();
    if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfc);
    if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfd);
    if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkc);
    if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkd);
    if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
    if (type == "Strip")
        return std::make_unique<StripNormalizer>(field.bool_or("strip_left", true), field.bool_or("strip_right", true));
    if (type == "Replace")
        return std::make_unique<ReplaceNormalizer>(read_pattern(field.at("pattern")), field.at("content").string());
    if (type == "Prepend") return std::make_unique<PrependNormalizer>(field.at("prepend").string());
    if (type == "BertNormalizer") {
        BertNormalizerOptions options;
        options.clean_text = field.bool_or("clean_text", true);
        options.handle_chinese_chars = field.bool_or("handle_chinese_chars", true);
        if (const auto strip = field.find("strip_accents")) options.strip_accents = strip->boolean();
        options.lowercase = field.bool_or("lowercase", true);
        return make_bert_normalizer(options);
    }
    if (type == "Sequence")
        return std::make_unique<SequenceNormalizer>(read_each(field, "normalizers", read_normalizer));
    if (type == "Precompiled") return read_precompiled_normalizer(field);
    field.at("type").fail("\"" + type +
                          "\" is not a normalizer this reader knows (NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, "
                          "Prepend, BertNormalizer, Precompiled, Sequence)");
}

}   // namespace headscope::tokenizer
