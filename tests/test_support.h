#pragma once
// Shared helpers for the tests: temporary folders, absolute comparisons, golden cases.

#include "core/tensor/matrix.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

namespace headscope::test {

// Whether this build runs under AddressSanitizer, which maps terabytes of shadow memory
// before main: address-space limits (ulimit -v) cannot be tried there.
inline bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

// A fresh folder under the system temp dir, removed with everything in it at scope exit.
class TempDir {
public:
    TempDir() {
        std::random_device entropy;
        path_ = std::filesystem::temp_directory_path() /
                ("headscope-test-" + std::to_string(entropy()) + std::to_string(entropy()));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// The words that run a program under a virtual X display of 1280x800 (or `screen`,
// WIDTHxHEIGHT; xvfb-run -a), with
// its X authority file in `auth_dir`. Left to itself, xvfb-run keeps that file in a
// temporary folder of its own and, when removing the folder fails at exit, returns 5
// instead of the program's exit status (seen once in the sanitizer run, failing a test
// whose program had exited as expected).
inline std::vector<std::string> xvfb_run_words(const TempDir& auth_dir, const std::string& screen = "1280x800") {
    std::string screen_flag("-screen 0 ");
    screen_flag.append(screen).append("x24");
    return {"xvfb-run", "-a", "-f", auth_dir.file("Xauthority"), "-s", screen_flag};
}

// The same, as the start of a shell command line (single-quoted words, a space after).
inline std::string xvfb_run_prefix(const TempDir& auth_dir, const std::string& screen = "1280x800") {
    std::string prefix;
    for (const std::string& word : xvfb_run_words(auth_dir, screen)) prefix += "'" + word + "' ";
    return prefix;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A shell command's exit status as a shell gives it: 128 + N when signal N ended it.
inline int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Runs a shell command that sends its standard error to `stderr_path`, and returns its
// exit code. In the sanitizer build LeakSanitizer checks each process at exit from a
// tracer thread of its own, and LLVM 14's tracer has itself crashed now and then under
// load (signal 11 in its StopTheWorld: once in the soak, once in an error-catalogue row
// of the window). It then prints "LeakSanitizer has encountered a fatal error" and
// aborts (134). That says nothing about our code, so such a run is made once more; a
// leak it finds ("detected memory leaks"), or any other failure, counts as it is.
// Some builds of the window crash the tracer on nearly every run (2026-11-24: the same
// source passed in one build tree and failed in another, always at the same place in
// its SuspendAllThreads, before any leak is looked at). After a second such crash the
// run is made a third time without the leak check at exit, ASan and UBSan still on: the
// test then checks what it was written for, and the soak and every other run still
// check for leaks.
inline int run_command(const std::string& command, const std::string& stderr_path) {
    const auto tracer_failed = [&] {
        return read_bytes(stderr_path).find("LeakSanitizer has encountered a fatal error") != std::string::npos;
    };
    int exit_code = exit_code_of(std::system(command.c_str()));
    if (exit_code != 0 && tracer_failed()) {
        MESSAGE("LeakSanitizer's own tracer failed at exit; running again: " << command);
        exit_code = exit_code_of(std::system(command.c_str()));
    }
    if (exit_code != 0 && tracer_failed()) {
        MESSAGE("LeakSanitizer's tracer failed again; once more without the leak check at exit");
        const char* options = std::getenv("ASAN_OPTIONS");
        // Exported first, so that any shell command (not only a simple one) runs under it.
        const std::string without_leaks = "ASAN_OPTIONS='" + std::string(options != nullptr ? options : "") +
                                          (options != nullptr && *options != '\0' ? ":" : "") +
                                          "detect_leaks=0'; export ASAN_OPTIONS; " + command;
        exit_code = exit_code_of(std::system(without_leaks.c_str()));
    }
    return exit_code;
}

// Largest |a - b| over two equally shaped float ranges; +inf when the shapes differ or
// either side is not finite where the other is.
inline double max_abs_diff(const float* a, const float* b, std::size_t n) {
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
        if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
    return worst;
}

inline double max_abs_diff(const Matrix& a, const Matrix& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    return max_abs_diff(a.data(), b.data(), static_cast<std::size_t>(a.size()));
}

// The line of /proc/self/smaps that starts with `field` ("VmFlags:", "Rss:") for the
// mapping of this process that holds `address`; empty when none does.
inline std::string smaps_line_at(const void* address, const std::string& field) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    std::string line;
    while (std::getline(smaps, line)) {
        std::uintptr_t begin = 0;
        std::uintptr_t end = 0;
        char dash = 0;
        std::istringstream range(line);
        if (range >> std::hex >> begin >> dash >> end && dash == '-') {
            inside = begin <= at && at < end;
            continue;
        }
        if (inside && line.rfind(field, 0) == 0) return line;
    }
    return {};
}

// The absolute tolerance of every golden comparison (issue: <= 1e-5).
constexpr double golden_tolerance = 1e-5;

inline std::string golden_dir() { return HEADSCOPE_GOLDEN_DIR; }

struct GoldenCase {
    std::string name;
    std::string folder;
    int heads = 0;
    bool causal = false;
    bool kv = false;
    bool keep = false;
    std::vector<int> disable_heads;
};

inline std::vector<GoldenCase> golden_cases() {
    std::ifstream in(golden_dir() + "/cases.json");
    REQUIRE_MESSAGE(in.good(), "missing " << golden_dir() << "/cases.json (run tools/make_golden.py)");
    const auto manifest = nlohmann::json::parse(in);
    std::vector<GoldenCase> cases;
    for (const auto& c : manifest.at("cases")) {
        GoldenCase g;
        g.name = c.at("name").get<std::string>();
        g.folder = golden_dir() + "/" + g.name;
        g.heads = c.at("heads").get<int>();
        g.causal = c.at("causal").get<bool>();
        g.kv = c.at("kv").get<bool>();
        g.keep = c.at("keep").get<bool>();
        g.disable_heads = c.at("disable_heads").get<std::vector<int>>();
        cases.push_back(g);
    }
    return cases;
}

// Matrices with entries from N(0, 1), reproducible by seed.
inline Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng, float scale = 1.0f) {
    std::normal_distribution<float> normal(0.0f, scale);
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    return m;
}

}   // namespace headscope::test
