#include "core/base/index_lists.h"

#include "core/base/error.h"
#include "core/base/shown.h"

#include <algorithm>
#include <limits>

namespace headscope {

namespace {

std::vector<std::string> split(const std::string& flag, const std::string& list, const char* example) {
    if (list.empty()) throw Error(flag + ": empty list (expected e.g. " + example + ")");
    std::vector<std::string> items(1);
    for (char c : list) {
        if (c == ',') {
            items.emplace_back();
        } else {
            items.back() += c;
        }
    }
    for (const auto& item : items) {
        if (item.empty()) {
            throw Error(flag + ": '" + shown(list) + "' has an empty item (expected e.g. " + example + ")");
        }
    }
    return items;
}

// Eighteen digits always fit an int64 (and are more than any id, layer or head count).
constexpr std::size_t max_digits = 18;

// A plain decimal; -1 for anything else, -2 for digits past max_digits.
std::int64_t parse_decimal(const std::string& text) {
    if (text.empty()) return -1;
    std::int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return -1;
    }
    if (text.size() > max_digits) return -2;
    for (char c : text) value = value * 10 + (c - '0');
    return value;
}

}   // namespace

std::vector<std::int64_t> parse_index_list(const std::string& flag, const std::string& list, const char* example) {
    std::vector<std::int64_t> values;
    for (const auto& item : split(flag, list, example)) {
        const std::int64_t v = parse_decimal(item);
        if (v == -2) {
            throw Error(flag + ": '" + shown(item) + "' is too large (at most " + std::to_string(max_digits) +
                        " digits; expected e.g. " + example + ")");
        }
        if (v < 0) {
            throw Error(flag + ": '" + shown(item) + "' is not a non-negative whole number (expected e.g. " + example +
                        ")");
        }
        values.push_back(v);
    }
    return values;
}

std::vector<std::pair<std::int64_t, std::int64_t>> parse_layer_head_list(const std::string& flag,
                                                                         const std::string& list) {
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    for (const auto& item : split(flag, list, "0.3,1.0")) {
        const auto dot = item.find('.');
        const std::int64_t layer = dot == std::string::npos ? -1 : parse_decimal(item.substr(0, dot));
        const std::int64_t head = dot == std::string::npos ? -1 : parse_decimal(item.substr(dot + 1));
        if (layer < 0 || head < 0) {
            throw Error(flag + ": '" + shown(item) + "' is not LAYER.HEAD (expected e.g. 0.3,1.0)");
        }
        pairs.emplace_back(layer, head);
    }
    return pairs;
}

std::string seed_problem(const std::string& text) {
    const std::string largest = std::to_string(std::numeric_limits<std::uint64_t>::max());
    // Built by appending: GCC 12 warns (-Wrestrict, wrongly) on "'" + std::string.
    std::string quoted(1, '\'');
    quoted.append(shown(text)).append(1, '\'');
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) return quoted + " is not a whole number 0.." + largest;
    const std::size_t first = std::min(text.find_first_not_of('0'), text.size() - 1);
    const std::string significant = text.substr(first);
    if (significant.size() > largest.size() || (significant.size() == largest.size() && significant > largest)) {
        return quoted + " is too large (at most " + largest + ")";
    }
    return "";
}

}   // namespace headscope
