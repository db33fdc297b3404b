#include "core/text/text.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <utf8proc.h>

namespace headscope {

namespace {

enum class CharClass { space, word, alone };

CharClass classify(utf8proc_int32_t c) {
    // Each CJK ideograph stands alone, as BERT's tokenizer splits them.
    if (tokenizer::is_cjk_ideograph(static_cast<char32_t>(c))) return CharClass::alone;
    // Letters, marks and numbers make words; the underscore joins them, as in identifiers.
    if (tokenizer::is_letter_or_mark(static_cast<char32_t>(c))) return CharClass::word;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: return CharClass::space;
    case UTF8PROC_CATEGORY_CC:
        // Tab, newlines and friends are whitespace; other control bytes are kept as tokens.
        return (c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == 0x85) ? CharClass::space
                                                                                            : CharClass::alone;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_PC: return CharClass::word;
    default:   // punctuation, symbols (emoji are So), format characters
        return CharClass::alone;
    }
}

struct Decoded {
    utf8proc_int32_t code_point;
    std::size_t length;
};

Decoded decode_at(std::string_view text, std::size_t at, const std::string& label) {
    utf8proc_int32_t c = 0;
    const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data() + at);
    const utf8proc_ssize_t n = utf8proc_iterate(bytes, static_cast<utf8proc_ssize_t>(text.size() - at), &c);
    if (n <= 0) throw Error(label + ": invalid UTF-8 at byte " + std::to_string(at));
    return {c, static_cast<std::size_t>(n)};
}

}   // namespace

void validate_utf8(std::string_view text, const std::string& label) {
    for (std::size_t at = 0; at < text.size();) at += decode_at(text, at, label).length;
}

std::string read_sentence_file(const std::string& path) {
    std::string text = read_file_bytes(path, std::uintmax_t{16} << 20, "a text file");
    if (const auto nul = text.find('\0'); nul != std::string::npos) {
        throw Error(path + ": byte " + std::to_string(nul) + " is NUL; expected UTF-8 text");
    }
    validate_utf8(text, path);
    if (text.ends_with('\n')) text.pop_back();
    if (text.ends_with('\r')) text.pop_back();
    return text;
}

std::vector<TextToken> tokenize_words(std::string_view text, const std::string& label) {
    validate_utf8(text, label);
    std::vector<TextToken> tokens;
    const auto emit = [&](std::size_t begin, std::size_t end) {
        tokens.push_back({std::string(text.substr(begin, end - begin)), begin, end});
    };

    std::size_t word_begin = std::string_view::npos;   // start of the word being read, if any
    std::size_t at = 0;
    utf8proc_int32_t break_state = 0;
    while (at < text.size()) {
        // One grapheme cluster: its first code point decides its class.
        const std::size_t cluster_begin = at;
        const Decoded first = decode_at(text, at, label);
        const CharClass kind = classify(first.code_point);
        utf8proc_int32_t previous = first.code_point;
        at += first.length;
        while (at < text.size()) {
            const Decoded next = decode_at(text, at, label);
            if (utf8proc_grapheme_break_stateful(previous, next.code_point, &break_state)) break;
            previous = next.code_point;
            at += next.length;
        }
        break_state = 0;   // the next cluster starts the break rules afresh

        if (kind == CharClass::word) {
            if (word_begin == std::string_view::npos) word_begin = cluster_begin;
            continue;
        }
        if (word_begin != std::string_view::npos) {
            emit(word_begin, cluster_begin);
            word_begin = std::string_view::npos;
        }
        if (kind == CharClass::alone) emit(cluster_begin, at);
    }
    if (word_begin != std::string_view::npos) emit(word_begin, text.size());
    return tokens;
}

void split_on_specials(std::string_view text, const std::vector<SpecialToken>& specials,
                       const std::function<void(std::size_t, std::size_t)>& on_text,
                       const std::function<void(const SpecialToken&, std::size_t)>& on_special) {
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t found = std::string_view::npos;
        const SpecialToken* which = nullptr;
        for (const SpecialToken& special : specials) {
            const std::size_t p = text.find(special.first, at);
            if (p < found) {
                found = p;
                which = &special;
            }
        }
        on_text(at, which ? found : text.size());
        if (!which) return;
        on_special(*which, found);
        at = found + which->first.size();
    }
}

}   // namespace headscope
