#pragma once
// A value from the user (a path, a name, a line of a file) as a message shows it: on one
// readable line, however long or strange the value. Control characters (C0, DEL, C1, the
// line and paragraph separators, bidirectional overrides) and bytes that are not UTF-8
// are written as escapes (\n, \x0b, \u{2028}); past `max_characters` the value is cut
// with an ellipsis that says how much was left out.

#include <cstddef>
#include <string>
#include <string_view>

namespace headscope {

// Enough to recognize a path or a name; a 10 MB tensor name is not a message.
constexpr std::size_t shown_characters = 120;

std::string shown(std::string_view value, std::size_t max_characters = shown_characters);

}   // namespace headscope
