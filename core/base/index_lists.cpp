#include "core/base/index_lists.h"

#include "core/base/error.h"

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
        if (item.empty()) throw Error(flag + ": '" + list + "' has an empty item (expected e.g. " + example + ")");
    }
    return items;
}

// A plain decimal; nullopt-like -1 for anything else.
std::int64_t parse_decimal(const std::string& text) {
    if (text.empty() || text.size() > 18) return -1;
    std::int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return -1;
        value = value * 10 + (c - '0');
    }
    return value;
}

}   // namespace

std::vector<std::int64_t> parse_index_list(const std::string& flag, const std::string& list, const char* example) {
    std::vector<std::int64_t> values;
    for (const auto& item : split(flag, list, example)) {
        const std::int64_t v = parse_decimal(item);
        if (v < 0) {
            throw Error(flag + ": '" + item + "' is not a non-negative whole number (expected e.g. " + example + ")");
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
            throw Error(flag + ": '" + item + "' is not LAYER.HEAD (expected e.g. 0.3,1.0)");
        }
        pairs.emplace_back(layer, head);
    }
    return pairs;
}

}   // namespace headscope
