// The tests' own command runner (test_support.h): a run that LeakSanitizer's tracer broke
// is made again, and after a second such crash once more without the leak check; nothing
// else is run again.

#include "test_support.h"

#include <algorithm>
#include <string>
#include <utility>

using headscope::test::read_bytes;
using headscope::test::run_command;
using headscope::test::TempDir;

namespace {

// A command that appends a line to `count` each time it runs, prints `message` on stderr
// and exits with `code`.
std::string counting_command(const TempDir& dir, const std::string& message, int code) {
    return "{ echo \"run $ASAN_OPTIONS\" >>'" + dir.file("count") + "'; printf '%s\\n' '" + message + "' >&2; exit " +
           std::to_string(code) + "; }";
}

int runs(const TempDir& dir) {
    const std::string lines = read_bytes(dir.file("count"));
    return static_cast<int>(std::count(lines.begin(), lines.end(), '\n'));
}

}   // namespace

TEST_CASE("run_command: LeakSanitizer's own crash at exit runs the command again, then without the leak check") {
    const TempDir dir;
    const std::string command = counting_command(dir, "==7==LeakSanitizer has encountered a fatal error.", 134) +
                                " 2>'" + dir.file("err") + "'";
    CHECK(run_command(command, dir.file("err")) == 134);   // it crashes every time: the last code stands
    CHECK(runs(dir) == 3);
    // Only the third run has the leak check off.
    const std::string lines = read_bytes(dir.file("count"));
    CHECK(std::count(lines.begin(), lines.end(), '\n') == 3);
    CHECK(lines.find("detect_leaks=0") == lines.rfind("detect_leaks=0"));
    CHECK(lines.substr(lines.find('\n', lines.find('\n') + 1) + 1).find("detect_leaks=0") != std::string::npos);
}

TEST_CASE("run_command: a leak found, any other failure, and success run once") {
    // Named members, not a structured binding: clang 14 cannot capture those (CAPTURE).
    for (const auto& run : {std::pair{std::string("==7==ERROR: LeakSanitizer: detected memory leaks"), 1},
                            std::pair{std::string("headscope: bad input"), 2}, std::pair{std::string(""), 0}}) {
        const std::string& message = run.first;
        const int code = run.second;
        CAPTURE(message);
        const TempDir dir;
        const std::string command = counting_command(dir, message, code) + " 2>'" + dir.file("err") + "'";
        CHECK(run_command(command, dir.file("err")) == code);
        CHECK(runs(dir) == 1);
    }
}
