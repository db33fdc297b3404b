#include "app/cli/cli_errors.h"

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

int report_error(const std::string& message) {
    std::fprintf(stderr, "headscope-cli: %s\n", one_line(message).c_str());
    return exit_bad_input;
}

void report_warning(const std::string& message) {
    std::fprintf(stderr, "headscope-cli: warning: %s\n", one_line(message).c_str());
}

}   // namespace headscope::cli
