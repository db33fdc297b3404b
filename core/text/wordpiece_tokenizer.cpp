#include "core/text/wordpiece_tokenizer.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/text/text.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace headscope {

namespace {

constexpr std::uintmax_t max_file_bytes = 256u << 20;

bool is_category(char32_t c, std::initializer_list<utf8proc_category_t> categories) {
    const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    return std::find(categories.begin(), categories.end(), cat) != categories.end();
}

// BERT's _is_whitespace: space, tab, newline, carriage return and Zs.
bool is_whitespace(char32_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || is_category(c, {UTF8PROC_CATEGORY_ZS});
}

// BERT's _is_control: C* categories except tab, newline and carriage return (which are whitespace).
bool is_control(char32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return false;
    return is_category(c, {UTF8PROC_CATEGORY_CC, UTF8PROC_CATEGORY_CF, UTF8PROC_CATEGORY_CS, UTF8PROC_CATEGORY_CO,
                           UTF8PROC_CATEGORY_CN});
}

// What Python's str.split() splits on once the text is cleaned: whitespace (now all
// spaces), plus the line and paragraph separators U+2028/U+2029, which are neither.
bool is_separator(char32_t c) {
    return is_whitespace(c) || is_category(c, {UTF8PROC_CATEGORY_ZL, UTF8PROC_CATEGORY_ZP});
}

// BERT's _is_punctuation: every non-letter/number ASCII symbol, and Unicode P*.
bool is_punctuation(char32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    return is_category(c, {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS, UTF8PROC_CATEGORY_PE,
                           UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF, UTF8PROC_CATEGORY_PO});
}

// BERT's _is_chinese_char: the CJK Unified Ideographs blocks (not kana or hangul).
bool is_cjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Unicode's Cased and Case_Ignorable, for Python's final-sigma rule in str.lower(),
// approximated from general categories (plus the Word_Break MidLetter/MidNumLet/Single_Quote
// characters, which are case-ignorable).
bool is_cased(char32_t c) { return is_category(c, {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT}); }

bool is_case_ignorable(char32_t c) {
    switch (c) {
    case 0x27:
    case 0x2E:
    case 0x3A:
    case 0xB7:
    case 0x387:
    case 0x55F:
    case 0x5F4:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xFE13:
    case 0xFE52:
    case 0xFE55:
    case 0xFF07:
    case 0xFF0E:
    case 0xFF1A: return true;
    default:
        return is_category(c, {UTF8PROC_CATEGORY_MN, UTF8PROC_CATEGORY_ME, UTF8PROC_CATEGORY_CF, UTF8PROC_CATEGORY_LM,
                               UTF8PROC_CATEGORY_SK});
    }
}

std::string utf8_encode(char32_t c) {
    utf8proc_uint8_t buffer[4];
    const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buffer);
    return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

std::string quote_token(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto b = static_cast<unsigned char>(ch);
        if (b < 0x20 || b == 0x7F) {
            const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 15];
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

// NFC, as current transformers BertTokenizer applies it before splitting on whitespace,
// one grapheme cluster at a time (composition never crosses one), so each character of
// the result keeps the span of the cluster it came from.
std::vector<WordPieceChar> compose_nfc(const std::vector<WordPieceChar>& word) {
    std::vector<WordPieceChar> out;
    out.reserve(word.size());
    utf8proc_int32_t state = 0;
    for (std::size_t i = 0; i < word.size();) {
        std::size_t j = i + 1;
        while (j < word.size() && !utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(word[j - 1].c),
                                                                    static_cast<utf8proc_int32_t>(word[j].c), &state)) {
            ++j;
        }
        state = 0;
        if (j == i + 1 && word[i].c < 0x300) {   // nothing below U+0300 composes or changes alone
            out.push_back(word[i]);
            i = j;
            continue;
        }
        std::string cluster;
        for (std::size_t k = i; k < j; ++k) cluster += utf8_encode(word[k].c);
        utf8proc_uint8_t* composed = nullptr;
        const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(cluster.data()),
                                    static_cast<utf8proc_ssize_t>(cluster.size()), &composed,
                                    static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
        if (n < 0) throw Error(std::string("cannot normalise text to NFC: ") + utf8proc_errmsg(n));
        for (utf8proc_ssize_t at = 0; at < n;) {
            utf8proc_int32_t c = 0;
            at += utf8proc_iterate(composed + at, n - at, &c);
            out.push_back({static_cast<char32_t>(c), word[i].begin, word[j - 1].end});
        }
        std::free(composed);
        i = j;
    }
    return out;
}

}   // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options,
                                       const std::string& label)
    : vocab_(std::move(vocab)), options_(options) {
    if (vocab_.empty()) throw Error(label + ": the vocabulary is empty");
    if (vocab_.size() > max_entries) {
        throw Error(label + ": " + std::to_string(vocab_.size()) + " entries, more than " +
                    std::to_string(max_entries));
    }
    ids_.reserve(vocab_.size());
    for (std::size_t i = 0; i < vocab_.size(); ++i) {
        const std::string& token = vocab_[i];
        validate_utf8(token, label + ": token " + std::to_string(i));
        if (token.empty()) continue;   // a blank line keeps the ids after it in place, and matches nothing
        const auto [it, added] = ids_.emplace(token, static_cast<std::int32_t>(i));
        if (!added) {
            throw Error(label + ": " + quote_token(token) + " is listed twice (ids " + std::to_string(it->second) +
                        " and " + std::to_string(i) + ")");
        }
    }
    const auto required = [&](const char* name, const char* why) {
        const auto it = ids_.find(name);
        if (it == ids_.end()) throw Error(label + ": has no " + name + " token (" + why + ")");
        return it->second;
    };
    unk_id_ = required("[UNK]", "needed for words it cannot split");
    cls_id_ = required("[CLS]", "needed to start a sequence");
    sep_id_ = required("[SEP]", "needed to end a sequence");
    for (const char* special : {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"}) {
        if (const auto it = ids_.find(special); it != ids_.end()) specials_.emplace_back(special, it->second);
    }
    std::stable_sort(specials_.begin(), specials_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_txt_path, WordPieceOptions options) {
    const std::string text = read_file_bytes(vocab_txt_path, max_file_bytes, "a vocabulary");

    // Count lines before building anything.
    const std::size_t newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    const std::size_t lines = newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
    if (lines > max_entries) {
        throw Error(vocab_txt_path + ": " + std::to_string(lines) + " lines, more than the " +
                    std::to_string(max_entries) + " tokens a vocabulary may have");
    }
    std::vector<std::string> vocab;
    vocab.reserve(lines);
    for (std::size_t at = 0; at < text.size();) {
        std::size_t stop = text.find('\n', at);
        if (stop == std::string::npos) stop = text.size();
        std::string_view line(text.data() + at, stop - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        vocab.emplace_back(line);
        at = stop + 1;
    }
    return WordPieceTokenizer(std::move(vocab), options, vocab_txt_path);
}

const std::string& WordPieceTokenizer::token(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_.size()) {
        throw Error("token id " + std::to_string(id) + " is not in the vocabulary (" + std::to_string(vocab_.size()) +
                    " tokens)");
    }
    return vocab_[static_cast<std::size_t>(id)];
}

std::optional<std::int32_t> WordPieceTokenizer::find(std::string_view token) const {
    const auto it = ids_.find(std::string(token));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

// Greedy longest-match-first over one basic-tokenized word.
void WordPieceTokenizer::wordpiece(const std::vector<Char>& word, std::vector<WordPieceToken>& out) const {
    if (word.empty()) return;
    if (word.size() > options_.max_input_chars_per_word) {
        out.push_back({unk_id_, 0, word.front().begin, word.back().end, vocab_[static_cast<std::size_t>(unk_id_)]});
        return;
    }
    // The word as UTF-8, and where each character starts in it.
    std::string text;
    std::vector<std::size_t> starts;
    for (const Char& ch : word) {
        starts.push_back(text.size());
        text += utf8_encode(ch.c);
    }
    starts.push_back(text.size());

    std::vector<WordPieceToken> pieces;
    std::size_t start = 0;
    while (start < word.size()) {
        std::size_t end = word.size();
        std::optional<std::int32_t> found;
        for (; end > start; --end) {
            std::string piece = text.substr(starts[start], starts[end] - starts[start]);
            if (start > 0) piece = "##" + piece;
            const auto it = ids_.find(piece);
            if (it != ids_.end()) {
                found = it->second;
                break;
            }
        }
        if (!found) {
            out.push_back({unk_id_, 0, word.front().begin, word.back().end, vocab_[static_cast<std::size_t>(unk_id_)]});
            return;
        }
        pieces.push_back({*found, 0, word[start].begin, word[end - 1].end, vocab_[static_cast<std::size_t>(*found)]});
        start = end;
    }
    out.insert(out.end(), pieces.begin(), pieces.end());
}

// One whitespace-separated word: lower-case, strip accents, split off punctuation, WordPiece.
void WordPieceTokenizer::basic_word(std::vector<Char> word, std::vector<WordPieceToken>& out) const {
    word = compose_nfc(word);
    if (options_.do_lower_case) {
        // Python's str.lower(): full mappings (U+0130 -> "i" + U+0307) and the final sigma.
        std::vector<Char> lowered;
        lowered.reserve(word.size());
        for (std::size_t i = 0; i < word.size(); ++i) {
            const Char& ch = word[i];
            if (ch.c == 0x130) {
                lowered.push_back({U'i', ch.begin, ch.end});
                lowered.push_back({0x307, ch.begin, ch.end});
            } else if (ch.c == 0x3A3) {
                std::size_t j = i;
                while (j > 0 && is_case_ignorable(word[j - 1].c)) --j;
                bool final_sigma = j > 0 && is_cased(word[j - 1].c);
                if (final_sigma) {
                    std::size_t k = i + 1;
                    while (k < word.size() && is_case_ignorable(word[k].c)) ++k;
                    final_sigma = k == word.size() || !is_cased(word[k].c);
                }
                lowered.push_back({final_sigma ? char32_t{0x3C2} : char32_t{0x3C3}, ch.begin, ch.end});
            } else {
                lowered.push_back(
                    {static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(ch.c))), ch.begin, ch.end});
            }
        }
        word = std::move(lowered);
    }
    const bool strip =
        options_.do_lower_case ? options_.strip_accents.value_or(true) : options_.strip_accents.value_or(false);
    if (strip) {
        // NFD (canonical decomposition, then marks in canonical order), then drop Mn.
        std::vector<Char> decomposed;
        for (const Char& ch : word) {
            utf8proc_int32_t buffer[16];
            int boundclass = 0;
            const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(ch.c), buffer, 16, UTF8PROC_DECOMPOSE,
                                                   &boundclass);
            if (n < 0 || n > 16) throw Error("cannot decompose code point " + std::to_string(ch.c));
            for (utf8proc_ssize_t k = 0; k < n; ++k) {
                decomposed.push_back({static_cast<char32_t>(buffer[k]), ch.begin, ch.end});
            }
        }
        const auto ccc = [](char32_t c) {
            return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
        };
        for (std::size_t i = 0; i < decomposed.size();) {
            std::size_t j = i;
            while (j < decomposed.size() && ccc(decomposed[j].c) != 0) ++j;
            std::stable_sort(decomposed.begin() + static_cast<std::ptrdiff_t>(i),
                             decomposed.begin() + static_cast<std::ptrdiff_t>(j),
                             [&](const Char& a, const Char& b) { return ccc(a.c) < ccc(b.c); });
            i = j + 1;
        }
        word.clear();
        for (const Char& ch : decomposed) {
            if (!is_category(ch.c, {UTF8PROC_CATEGORY_MN})) word.push_back(ch);
        }
    }
    // Each punctuation character is a word of its own.
    std::vector<Char> part;
    for (const Char& ch : word) {
        if (is_punctuation(ch.c)) {
            wordpiece(part, out);
            part.clear();
            wordpiece({ch}, out);
        } else {
            part.push_back(ch);
        }
    }
    wordpiece(part, out);
}

// Text without special tokens in it; `offset` is where it starts in the caller's text.
void WordPieceTokenizer::tokenize_chunk(std::string_view text, std::size_t offset,
                                        std::vector<WordPieceToken>& out) const {
    std::vector<Char> word;
    const auto flush = [&]() {
        if (!word.empty()) basic_word(std::move(word), out);
        word.clear();
    };
    const auto* data = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
    for (std::size_t at = 0; at < text.size();) {
        utf8proc_int32_t code = 0;
        const auto n = utf8proc_iterate(data + at, static_cast<utf8proc_ssize_t>(text.size() - at), &code);
        const auto c = static_cast<char32_t>(code);
        const Char ch{c, offset + at, offset + at + static_cast<std::size_t>(n)};
        at += static_cast<std::size_t>(n);
        if (c == 0 || c == 0xFFFD || is_control(c)) continue;   // _clean_text drops them
        if (is_separator(c)) {
            flush();
        } else if (options_.tokenize_chinese_chars && is_cjk(c)) {
            flush();
            word.push_back(ch);
            flush();
        } else {
            word.push_back(ch);
        }
    }
    flush();
}

std::vector<WordPieceToken> WordPieceTokenizer::tokenize(std::string_view text, const std::string& label) const {
    validate_utf8(text, label);
    std::vector<WordPieceToken> out;
    split_on_specials(
        text, specials_,
        [&](std::size_t begin, std::size_t end) { tokenize_chunk(text.substr(begin, end - begin), begin, out); },
        [&](const SpecialToken& special, std::size_t at) {
            out.push_back({special.second, 0, at, at + special.first.size(), special.first});
        });
    return out;
}

std::vector<WordPieceToken> WordPieceTokenizer::encode(std::string_view text, const std::string& label) const {
    std::vector<WordPieceToken> out;
    out.push_back({cls_id_, 0, 0, 0, vocab_[static_cast<std::size_t>(cls_id_)]});
    const auto pieces = tokenize(text, label);
    out.insert(out.end(), pieces.begin(), pieces.end());
    out.push_back({sep_id_, 0, text.size(), text.size(), vocab_[static_cast<std::size_t>(sep_id_)]});
    return out;
}

std::vector<WordPieceToken> WordPieceTokenizer::encode_pair(std::string_view text, std::string_view text_pair) const {
    std::vector<WordPieceToken> out = encode(text, "text");
    for (WordPieceToken t : tokenize(text_pair, "text_pair")) {
        t.type_id = 1;
        out.push_back(std::move(t));
    }
    out.push_back({sep_id_, 1, text_pair.size(), text_pair.size(), vocab_[static_cast<std::size_t>(sep_id_)]});
    return out;
}

std::string WordPieceTokenizer::decode(std::span<const std::int32_t> ids) const {
    std::string out;
    for (const std::int32_t id : ids) {
        const std::string& piece = token(id);
        if (!out.empty() && piece.starts_with("##")) {
            out += piece.substr(2);
        } else {
            if (!out.empty()) out += ' ';
            out += piece;
        }
    }
    return out;
}

}   // namespace headscope
