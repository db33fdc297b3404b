#include "core/text/tokenizer/onig_regex.h"

#include "core/base/error.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <oniguruma.h>

#include <dlfcn.h>

#include <memory>

namespace headscope::tokenizer {

namespace {

// Oniguruma, loaded with RTLD_LOCAL rather than linked. libonig.so also exports POSIX
// regcomp / regexec / regfree under those names; linked into the process, they stand in for
// glibc's for every library, and Mesa's driconf (the window's OpenGL) then compiles with one
// and runs with the other, and deadlocks under AddressSanitizer. Loaded locally, only these
// pointers reach it. Loaded once, on first use, and read-only after.
struct OnigLibrary {
    int (*new_regex)(regex_t**, const OnigUChar*, const OnigUChar*, OnigOptionType, OnigEncoding, OnigSyntaxType*,
                     OnigErrorInfo*) = nullptr;
    void (*free_regex)(regex_t*) = nullptr;
    int (*search)(regex_t*, const OnigUChar*, const OnigUChar*, const OnigUChar*, const OnigUChar*, OnigRegion*,
                  OnigOptionType) = nullptr;
    OnigRegion* (*new_region)() = nullptr;
    void (*free_region)(OnigRegion*, int) = nullptr;
    int (*error_text)(OnigUChar*, int, ...) = nullptr;
    OnigEncoding utf8 = nullptr;
    OnigSyntaxType* syntax = nullptr;   // the library's default, as Hugging Face's onig crate uses
    std::string failure;                // why it could not be loaded; empty when it was
};

template <typename Function>
bool resolve(void* handle, const char* name, Function& function) {
    function = reinterpret_cast<Function>(dlsym(handle, name));
    return function != nullptr;
}

OnigLibrary load_onig() {
    OnigLibrary lib;
    void* handle = dlopen("libonig.so.5", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) handle = dlopen("libonig.so", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        lib.failure = std::string("Oniguruma (libonig.so.5, Debian's libonig5) cannot be loaded: ") +
                      (why != nullptr ? why : "not found");
        return lib;
    }
    void* utf8 = dlsym(handle, "OnigEncodingUTF8");
    void* syntax = dlsym(handle, "OnigDefaultSyntax");
    const bool found =
        resolve(handle, "onig_new", lib.new_regex) && resolve(handle, "onig_free", lib.free_regex) &&
        resolve(handle, "onig_search", lib.search) && resolve(handle, "onig_region_new", lib.new_region) &&
        resolve(handle, "onig_region_free", lib.free_region) &&
        resolve(handle, "onig_error_code_to_str", lib.error_text) && utf8 != nullptr && syntax != nullptr;
    if (!found) {
        lib.failure = "Oniguruma (libonig.so.5) lacks a function this build uses";
        return lib;
    }
    lib.utf8 = static_cast<OnigEncoding>(utf8);
    lib.syntax = *static_cast<OnigSyntaxType**>(syntax);
    return lib;
}

const OnigLibrary& onig() {
    static const OnigLibrary lib = load_onig();
    if (!lib.failure.empty()) throw Error(lib.failure);
    return lib;
}

const OnigUChar* bytes(std::string_view text) { return reinterpret_cast<const OnigUChar*>(text.data()); }

std::string onig_message(int code, OnigErrorInfo* info) {
    OnigUChar buffer[ONIG_MAX_ERROR_MESSAGE_LEN];
    const int n = info != nullptr ? onig().error_text(buffer, code, info) : onig().error_text(buffer, code);
    return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n > 0 ? n : 0));
}

}   // namespace

OnigRegex::OnigRegex(std::string_view pattern, const std::string& label) : pattern_(pattern) {
    const OnigLibrary& lib = onig();
    regex_t* compiled = nullptr;
    OnigErrorInfo info{};
    const int code = lib.new_regex(&compiled, bytes(pattern), bytes(pattern) + pattern.size(), ONIG_OPTION_NONE,
                                   lib.utf8, lib.syntax, &info);
    if (code != ONIG_NORMAL) {
        std::string shown(pattern.substr(0, 120));
        if (pattern.size() > 120) shown += "...";
        throw Error(label + ": invalid regex \"" + shown + "\": " + onig_message(code, &info));
    }
    regex_ = compiled;
}

OnigRegex::~OnigRegex() {
    if (regex_ != nullptr) onig().free_regex(static_cast<regex_t*>(regex_));
}

std::vector<std::pair<std::size_t, std::size_t>> OnigRegex::find_all(std::string_view text) const {
    const OnigLibrary& lib = onig();
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    const std::unique_ptr<OnigRegion, void (*)(OnigRegion*)> region(lib.new_region(),
                                                                    [](OnigRegion* r) { onig().free_region(r, 1); });
    const OnigUChar* begin = bytes(text);
    const OnigUChar* end = begin + text.size();
    std::size_t at = 0;
    std::size_t last_match_end = std::string_view::npos;
    while (at <= text.size()) {
        const int found =
            lib.search(static_cast<regex_t*>(regex_), begin, end, begin + at, end, region.get(), ONIG_OPTION_NONE);
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
