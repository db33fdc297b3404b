#include "core/text/tokenizer/byte_level.h"

#include "core/text/tokenizer/unicode_chars.h"

#include <array>

namespace headscope::tokenizer {

namespace {

// Printable Latin-1 bytes stand for themselves, the other 68 (controls, space, DEL, NBSP,
// soft hyphen) for U+0100 onwards.
constexpr std::array<char32_t, 256> make_byte_chars() {
    std::array<char32_t, 256> chars{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        chars[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return chars;
}
constexpr std::array<char32_t, 256> byte_chars = make_byte_chars();

constexpr std::array<std::int16_t, 256 + 68> make_char_bytes() {
    std::array<std::int16_t, 256 + 68> bytes{};
    for (auto& b : bytes) b = -1;
    for (int b = 0; b < 256; ++b) bytes[byte_chars[static_cast<std::size_t>(b)]] = static_cast<std::int16_t>(b);
    return bytes;
}
constexpr std::array<std::int16_t, 256 + 68> char_bytes = make_char_bytes();

}   // namespace

char32_t byte_level_char(std::uint8_t byte) { return byte_chars[byte]; }

std::optional<std::uint8_t> byte_level_byte(char32_t c) {
    if (c >= char_bytes.size() || char_bytes[c] < 0) return std::nullopt;
    return static_cast<std::uint8_t>(char_bytes[c]);
}

std::optional<std::string> byte_level_bytes(std::string_view token) {
    std::string bytes;
    for (std::size_t at = 0; at < token.size();) {
        const DecodedChar d = decode_char(token, at);
        const auto byte = byte_level_byte(d.c);
        if (!byte) return std::nullopt;
        bytes += static_cast<char>(*byte);
        at += d.length;
    }
    return bytes;
}

}   // namespace headscope::tokenizer
