#include "core/text/tokenizer/precompiled_charsmap.h"

#include "core/base/error.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <cstring>

namespace headscope::tokenizer {

namespace {

// darts-clone's DoubleArrayUnit fields.
bool has_leaf(std::uint32_t unit) { return ((unit >> 8) & 1u) == 1u; }
std::uint32_t value_of(std::uint32_t unit) { return unit & ((1u << 31) - 1); }
std::uint32_t label_of(std::uint32_t unit) { return unit & ((1u << 31) | 0xFFu); }
std::uint32_t offset_of(std::uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

// A character's bytes as SentencePiece takes them when no rule applies: the character, or
// one byte of malformed UTF-8, which becomes U+FFFD.
std::size_t char_length(std::string_view text) {
    const auto lead = static_cast<unsigned char>(text[0]);
    const std::size_t length = lead < 0x80         ? 1
                               : lead >> 5 == 0x6  ? 2
                               : lead >> 4 == 0xE  ? 3
                               : lead >> 3 == 0x1E ? 4
                                                   : 0;
    if (length == 0 || length > text.size()) return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) return 0;
    }
    return length;
}

class PrecompiledNormalizer final : public Normalizer {
public:
    explicit PrecompiledNormalizer(PrecompiledCharsmap map) : map_(std::move(map)) {}
    void normalize(NormalizedText& text) const override { map_.normalize(text); }

private:
    PrecompiledCharsmap map_;
};

class UnchangedText final : public Normalizer {
public:
    void normalize(NormalizedText&) const override {}
};

}   // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view bytes) {
    if (bytes.size() < 4)
        throw Error("the map is " + std::to_string(bytes.size()) + " bytes, less than its 4-byte size");
    std::uint32_t trie_bytes = 0;
    for (int i = 3; i >= 0; --i)
        trie_bytes = (trie_bytes << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    if (trie_bytes % 4 != 0 || trie_bytes > bytes.size() - 4) {
        throw Error("its trie of " + std::to_string(trie_bytes) + " bytes does not fit the map's " +
                    std::to_string(bytes.size() - 4));
    }
    units_.resize(trie_bytes / 4);
    for (std::size_t u = 0; u < units_.size(); ++u) {
        std::uint32_t unit = 0;
        for (int i = 3; i >= 0; --i)
            unit = (unit << 8) | static_cast<unsigned char>(bytes[4 + u * 4 + static_cast<std::size_t>(i)]);
        units_[u] = unit;
    }
    strings_ = std::string(bytes.substr(4 + trie_bytes));
}

std::optional<PrecompiledCharsmap::Match> PrecompiledCharsmap::longest_prefix(std::string_view text) const {
    // darts-clone's commonPrefixSearch, keeping the longest key found; a unit outside the
    // trie (a damaged map) ends the search.
    if (units_.empty()) return std::nullopt;
    std::optional<Match> found;
    std::size_t node = offset_of(units_[0]);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        node ^= byte;
        if (node >= units_.size()) break;
        const std::uint32_t unit = units_[node];
        if (label_of(unit) != byte) break;
        node ^= offset_of(unit);
        if (node >= units_.size()) break;
        if (!has_leaf(unit)) continue;
        const std::size_t at = value_of(units_[node]);
        if (at >= strings_.size()) continue;
        const std::size_t end = strings_.find('\0', at);
        found = Match{i + 1,
                      std::string_view(strings_).substr(at, (end == std::string::npos ? strings_.size() : end) - at)};
    }
    return found;
}

void PrecompiledCharsmap::normalize(NormalizedText& text) const {
    const std::string& current = text.text();
    NormalizedText::Builder out;
    for (std::size_t at = 0; at < current.size();) {
        const std::string_view rest = std::string_view(current).substr(at);
        const std::optional<Match> match = longest_prefix(rest);
        std::size_t length = match ? match->length : char_length(rest);
        const Span first = text.char_span(at);
        if (match) {
            out.add_bytes(match->becomes, Span{first.begin, text.char_span(at + length - 1).end});
        } else if (length == 0) {
            out.add(0xFFFD, first);
            length = 1;
        } else {
            out.add_bytes(rest.substr(0, length), Span{first.begin, text.char_span(at + length - 1).end});
        }
        at += length;
    }
    text.assign(std::move(out));
}

std::optional<std::string> decode_base64(std::string_view text) {
    const auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (text.size() % 4 == 1) return std::nullopt;
    std::string bytes;
    bytes.reserve(text.size() * 3 / 4);
    std::uint32_t bits = 0;
    int held = 0;
    for (const char c : text) {
        const int v = value(c);
        if (v < 0) return std::nullopt;
        bits = (bits << 6) | static_cast<std::uint32_t>(v);
        held += 6;
        if (held >= 8) {
            held -= 8;
            bytes.push_back(static_cast<char>((bits >> held) & 0xFFu));
        }
    }
    return bytes;
}

std::unique_ptr<Normalizer> read_precompiled_normalizer(const JsonField& field) {
    const std::optional<JsonField> map = field.find("precompiled_charsmap");
    if (!map) return std::make_unique<UnchangedText>();   // null: Xenova's exports, no normalisation
    const std::optional<std::string> bytes = decode_base64(map->string());
    if (!bytes) map->expected("base64 text");
    if (bytes->empty()) return std::make_unique<UnchangedText>();
    try {
        return std::make_unique<PrecompiledNormalizer>(PrecompiledCharsmap(*bytes));
    } catch (const Error& e) {
        map->fail(e.what());
    }
}

}   // namespace headscope::tokenizer
