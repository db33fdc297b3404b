#pragma once
// Strict parsing of the comma-separated lists on the command lines of headscope-cli
// and headscope (--disable-heads, --disable, and --tokens once its caller has trimmed
// each item of spaces): every item a plain non-negative decimal, nothing empty, no
// stray signs, spaces or hex. Errors are headscope::Error naming the flag and the bad
// item.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace headscope {

// "3,0,17" -> {3, 0, 17}. `example` shows a valid list in the message.
std::vector<std::int64_t> parse_index_list(const std::string& flag, const std::string& list, const char* example);

// "0.3,1.0" -> {{0, 3}, {1, 0}} (layer.head pairs).
std::vector<std::pair<std::int64_t, std::int64_t>> parse_layer_head_list(const std::string& flag,
                                                                         const std::string& list);

// Why `text` is not a seed, a whole number 0 .. 18446744073709551615 in plain decimal
// ("" when it is one): "-1" and 2^64 would otherwise wrap into another seed silently.
std::string seed_problem(const std::string& text);

}   // namespace headscope
