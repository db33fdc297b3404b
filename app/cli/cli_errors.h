#pragma once
// How headscope-cli reports failure: one line on stderr, exit status 2.

#include <string>

namespace headscope::cli {

constexpr int exit_bad_input = 2;

// Prints "headscope-cli: <message>" as one line (newlines in the message become
// spaces) and returns exit_bad_input.
int report_error(const std::string& message);

// Prints "headscope-cli: warning: <message>" as one line.
void report_warning(const std::string& message);

}   // namespace headscope::cli
