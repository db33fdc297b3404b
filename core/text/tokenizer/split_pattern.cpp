#include "core/text/tokenizer/split_pattern.h"

#include "core/text/tokenizer/unicode_chars.h"

#include <algorithm>

namespace headscope::tokenizer {

Stretches stretches_of(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& matches) {
    if (text.empty()) return {{0, 0, false}};
    Stretches out;
    std::size_t previous = 0;
    for (const auto& [begin, end] : matches) {
        if (previous != begin) out.push_back({previous, begin, false});
        out.push_back({begin, end, true});
        previous = end;
    }
    if (previous != text.size()) out.push_back({previous, text.size(), false});
    return out;
}

Stretches stretches_of(std::string_view text, const std::function<bool(char32_t)>& is_match) {
    if (text.empty()) return {{0, 0, false}};
    Stretches out;
    std::size_t previous = 0;
    for (std::size_t at = 0; at < text.size();) {
        const DecodedChar d = decode_char(text, at);
        if (is_match(d.c)) {
            if (previous < at) out.push_back({previous, at, false});
            out.push_back({at, at + d.length, true});
            previous = at + d.length;
        }
        at += d.length;
    }
    if (previous < text.size()) out.push_back({previous, text.size(), false});
    return out;
}

SplitPattern SplitPattern::regex(std::string_view pattern, const std::string& label) {
    SplitPattern p;
    p.regex_ = std::make_shared<const OnigRegex>(pattern, label);
    return p;
}

SplitPattern SplitPattern::literal(std::string_view text) {
    SplitPattern p;
    p.literal_ = text;
    return p;
}

std::vector<std::pair<std::size_t, std::size_t>> SplitPattern::find_all(std::string_view text) const {
    if (regex_) return regex_->find_all(text);
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    if (literal_.empty()) return matches;
    for (std::size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at)) {
        matches.emplace_back(at, at + literal_.size());
        at += literal_.size();
    }
    return matches;
}

namespace {

// (stretch, removed) after the behaviour is applied, as Hugging Face's NormalizedString::split.
std::vector<std::pair<Stretch, bool>> apply_behavior(const Stretches& stretches, SplitBehavior behavior) {
    std::vector<std::pair<Stretch, bool>> out;
    bool previous_match = false;
    switch (behavior) {
    case SplitBehavior::isolated:
        for (const Stretch& s : stretches) out.push_back({s, false});
        break;
    case SplitBehavior::removed:
        for (const Stretch& s : stretches) out.push_back({s, s.is_match});
        break;
    case SplitBehavior::contiguous:
        for (const Stretch& s : stretches) {
            if (s.is_match == previous_match && !out.empty()) {
                out.back().first.end = s.end;
            } else {
                out.push_back({s, false});
            }
            previous_match = s.is_match;
        }
        break;
    case SplitBehavior::merged_with_previous:
        for (const Stretch& s : stretches) {
            if (s.is_match && !previous_match && !out.empty()) {
                out.back().first.end = s.end;
            } else {
                out.push_back({s, false});
            }
            previous_match = s.is_match;
        }
        break;
    case SplitBehavior::merged_with_next:
        for (auto it = stretches.rbegin(); it != stretches.rend(); ++it) {
            if (it->is_match && !previous_match && !out.empty()) {
                out.back().first.begin = it->begin;
            } else {
                out.push_back({*it, false});
            }
            previous_match = it->is_match;
        }
        std::reverse(out.begin(), out.end());
        break;
    }
    return out;
}

}   // namespace

std::vector<NormalizedText> split_text(const NormalizedText& text, Stretches stretches, SplitBehavior behavior,
                                       bool invert) {
    if (invert) {
        for (Stretch& s : stretches) s.is_match = !s.is_match;
    }
    std::vector<NormalizedText> pieces;
    for (const auto& [stretch, removed] : apply_behavior(stretches, behavior)) {
        if (!removed && stretch.end > stretch.begin) pieces.push_back(text.slice(stretch.begin, stretch.end));
    }
    return pieces;
}

}   // namespace headscope::tokenizer
