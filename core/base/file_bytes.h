#pragma once
// Reading a small input file (a tokenizer, a config, a sentence) whole, with the same
// one-line refusals everywhere: missing, a directory, unreadable, or larger than the
// cap (checked before anything is allocated).

#include <cstdint>
#include <string>
#include <string_view>

namespace headscope {

// The bytes of `path`. `what` names the kind of file for the messages, e.g. "a
// tokenizer file": "<path>: is a directory, expected a tokenizer file",
// "<path>: 300000000 bytes, more than the 256 MiB a tokenizer file may have".
// Files that report no size (/proc/self/status) are read to their end, within the cap.
std::string read_file_bytes(const std::string& path, std::uintmax_t max_bytes, std::string_view what);

// Why `path` cannot be reached, as a message says it: "no such file", "a loop of
// symlinks", "a symlink to <target>, which does not exist", "permission denied".
std::string why_unreachable(const std::string& path);

}   // namespace headscope
