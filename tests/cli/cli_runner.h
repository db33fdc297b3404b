#pragma once
// Running headscope-cli from tests: its exit code, stdout and stderr, and the
// contract's check for bad input (exit 2, exactly one line on stderr).

#include "core/safetensors.h"
#include "test_support.h"

#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace headscope::test {

struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline RunResult run_cli(const std::vector<std::string>& args) {
    TempDir streams;
    std::string command = shell_quote(HEADSCOPE_CLI);
    for (const auto& a : args) command.append(" ").append(shell_quote(a));
    command += " >" + shell_quote(streams.file("out")) + " 2>" + shell_quote(streams.file("err")) + " </dev/null";
    const int status = std::system(command.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = test::read_bytes(streams.file("out"));
    r.err = test::read_bytes(streams.file("err"));
    return r;
}

inline int count_lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The contract for bad input: exit 2, exactly one line on stderr holding `needle`.
inline void check_bad_input(const RunResult& r, const std::string& needle) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(needle) != std::string::npos, "stderr lacks: " << needle);
}

// Every element of a tensor in an output file, as float.
inline std::vector<float> floats(const SafetensorsFile& f, const std::string& name) { return f.get(name).to_floats(); }

} // namespace headscope::test
