#include "core/text/tokenizer/onig_regex.h"

#include "core/base/error.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <oniguruma.h>

#include <memory>

namespace headscope::tokenizer {

namespace {

const OnigUChar* bytes(std::string_view text) { return reinterpret_cast<const OnigUChar*>(text.data()); }

std::string onig_message(int code, OnigErrorInfo* info) {
    OnigUChar buffer[ONIG_MAX_ERROR_MESSAGE_LEN];
    const int n = info != nullptr ? onig_error_code_to_str(buffer, code, info) : onig_error_code_to_str(buffer, code);
    return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n > 0 ? n : 0));
}

}   // namespace

OnigRegex::OnigRegex(std::string_view pattern, const std::string& label) : pattern_(pattern) {
    regex_t* compiled = nullptr;
    OnigErrorInfo info{};
    const int code = onig_new(&compiled, bytes(pattern), bytes(pattern) + pattern.size(), ONIG_OPTION_NONE,
                              ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
    if (code != ONIG_NORMAL) {
        std::string shown(pattern.substr(0, 120));
        if (pattern.size() > 120) shown += "...";
        throw Error(label + ": invalid regex \"" + shown + "\": " + onig_message(code, &info));
    }
    regex_ = compiled;
}

OnigRegex::~OnigRegex() {
    if (regex_ != nullptr) onig_free(static_cast<regex_t*>(regex_));
}

std::vector<std::pair<std::size_t, std::size_t>> OnigRegex::find_all(std::string_view text) const {
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    const std::unique_ptr<OnigRegion, void (*)(OnigRegion*)> region(onig_region_new(),
                                                                    [](OnigRegion* r) { onig_region_free(r, 1); });
    const OnigUChar* begin = bytes(text);
    const OnigUChar* end = begin + text.size();
    std::size_t at = 0;
    std::size_t last_match_end = std::string_view::npos;
    while (at <= text.size()) {
        const int found =
            onig_search(static_cast<regex_t*>(regex_), begin, end, begin + at, end, region.get(), ONIG_OPTION_NONE);
        if (found == ONIG_MISMATCH) break;
        if (found < 0) throw Error("regex \"" + pattern_ + "\": " + onig_message(found, nullptr));
        const auto match_begin = static_cast<std::size_t>(region->beg[0]);
        const auto match_end = static_cast<std::size_t>(region->end[0]);
        // An empty match right where the last one ended is skipped (no endless loop).
        if (match_end != match_begin || match_end != last_match_end) matches.emplace_back(match_begin, match_end);
        last_match_end = match_end;
        if (match_end > match_begin) {
            at = match_end;
        } else if (match_end < text.size()) {
            at = match_end + decode_char(text, match_end).length;
        } else {
            break;
        }
    }
    return matches;
}

}   // namespace headscope::tokenizer
