#include "core/base/shown.h"

#include <cstdint>
#include <cstdio>

namespace headscope {

namespace {

// The code point starting at `at` and its length in bytes; length 0 when the bytes there
// are not well-formed UTF-8 (overlong forms, surrogates and truncated sequences included).
struct CodePoint {
    char32_t value = 0;
    std::size_t length = 0;
};

CodePoint decode(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return {lead, 1};
    std::size_t length = 0;
    char32_t value = 0;
    char32_t smallest = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2, value = lead & 0x1F, smallest = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3, value = lead & 0x0F, smallest = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4, value = lead & 0x07, smallest = 0x10000;
    } else {
        return {};
    }
    if (at + length > text.size()) return {};
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return {};
        value = (value << 6) | (byte(i) & 0x3F);
    }
    if (value < smallest || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return {};
    return {value, length};
}

// Characters that break or reorder a line in a terminal.
bool is_control(char32_t c) {
    return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029 ||
           (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

void append_escape(std::string& out, char32_t c) {
    char buffer[16];
    switch (c) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
    }
    if (c < 0x80) {
        std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(c));
    } else {
        std::snprintf(buffer, sizeof buffer, "\\u{%04x}", static_cast<unsigned>(c));
    }
    out += buffer;
}

}   // namespace

std::string shown(std::string_view value, std::size_t max_characters) {
    std::string out;
    std::size_t characters = 0;
    std::size_t at = 0;
    while (at < value.size() && characters < max_characters) {
        const CodePoint point = decode(value, at);
        if (point.length == 0) {
            char buffer[8];
            std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned char>(value[at]));
            out += buffer;
            at += 1;
        } else if (is_control(point.value)) {
            append_escape(out, point.value);
            at += point.length;
        } else {
            out.append(value.substr(at, point.length));
            at += point.length;
        }
        ++characters;
    }
    if (at < value.size()) out += "\xE2\x80\xA6 (" + std::to_string(value.size() - at) + " more bytes)";
    return out;
}

}   // namespace headscope
