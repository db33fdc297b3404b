#pragma once
// How headscope-cli reports failure: one line on stderr, exit status 2.

#include <string>
#include <vector>

namespace headscope::cli {

constexpr int exit_bad_input = 2;

// Prints "headscope-cli: <message>" as one line (newlines in the message become
// spaces) and returns exit_bad_input.
int report_error(const std::string& message);

// The warnings of one run (NaN in weights, a checkpoint field ignored), kept until it ends:
// after a success each is printed on its own line; after a failure they are folded into
// the failure's one line, which stays the only line on stderr.
class Warnings {
public:
    void add(const std::string& message) { messages_.push_back(message); }
    void print() const;   // "headscope-cli: warning: <message>", one line each
    // "<error> (after the warning: <first>; and N more)", or the error alone.
    std::string folded_into(const std::string& error) const;

private:
    std::vector<std::string> messages_;
};

}   // namespace headscope::cli
