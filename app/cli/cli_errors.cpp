#include "app/cli/cli_errors.h"

#include "core/base/shown.h"

#include <cstdio>

namespace headscope::cli {

namespace {

std::string one_line(std::string text) {
    for (char& c : text) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

}   // namespace

// However a message was built, it stays one readable line of bounded length.
constexpr std::size_t max_message_characters = 1000;

int report_error(const std::string& message) {
    std::fprintf(stderr, "headscope-cli: %s\n", shown(one_line(message), max_message_characters).c_str());
    return exit_bad_input;
}

void Warnings::print() const {
    for (const std::string& message : messages_) {
        std::fprintf(stderr, "headscope-cli: warning: %s\n", shown(one_line(message), max_message_characters).c_str());
    }
}

std::string Warnings::folded_into(const std::string& error) const {
    if (messages_.empty()) return error;
    std::string line = error + " (after the warning: " + messages_.front();
    if (messages_.size() > 1) line += "; and " + std::to_string(messages_.size() - 1) + " more";
    return line + ")";
}

}   // namespace headscope::cli
