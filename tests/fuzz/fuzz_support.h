#pragma once
// What the fuzz targets share: cutting one fuzz input into several files, a scratch
// folder to write them to, and the verdict on how a run ended.
//
// The verdict: a headscope::Error is the expected answer to bad input. Anything else
// that leaves the code under test (another exception type) is a finding, reported as
// one line and abort()ed so that libFuzzer saves the input; crashes, sanitizer reports,
// timeouts and out-of-memory are caught by libFuzzer itself. `require` states an
// invariant of a successful result (rows sum to 1, no NaN, ...).

#include "core/base/error.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unistd.h>
#include <vector>

namespace headscope::fuzz {

// Between two files of one input. Seeds (tools/make_fuzz_corpus.py) and the
// dictionaries use it; libFuzzer learns it from them.
inline constexpr std::string_view part_separator = "\n--8<--\n";

// The input cut at each separator, at most `max_parts` pieces (the last keeps the rest).
inline std::vector<std::string_view> split_parts(std::string_view data, std::size_t max_parts) {
    std::vector<std::string_view> parts;
    while (parts.size() + 1 < max_parts) {
        const std::size_t at = data.find(part_separator);
        if (at == std::string_view::npos) break;
        parts.push_back(data.substr(0, at));
        data.remove_prefix(at + part_separator.size());
    }
    parts.push_back(data);
    return parts;
}

[[noreturn]] inline void finding(std::string_view what) {
    std::fprintf(stderr, "\n==headscope-fuzz== FINDING: %.*s\n", static_cast<int>(what.size()), what.data());
    std::fflush(stderr);
    std::abort();
}

// A string_view, so that checks in loops over every cell allocate nothing; messages
// built from values are built only on failure (if (!ok) finding(...)).
inline void require(bool ok, std::string_view what) {
    if (!ok) finding("invariant broken: " + std::string(what));
}

// Runs `body`; a headscope::Error is fine (bad input, refused), anything else is a finding.
template <typename Body>
void run_expecting_errors(Body&& body) {
    try {
        body();
    } catch (const Error& e) {
        // The expected outcome for bad input; HEADSCOPE_FUZZ_VERBOSE=1 shows why (to check seeds).
        static const bool verbose = std::getenv("HEADSCOPE_FUZZ_VERBOSE") != nullptr;
        if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
    } catch (const std::exception& e) {
        finding(std::string("a non-headscope exception escaped: ") + typeid(e).name() + ": " + e.what());
    } catch (...) {
        finding("a non-std exception escaped");
    }
}

// One folder per process under $TMPDIR (or /dev/shm), emptied before each input and removed at exit:
// the loaders read files, so the inputs are written there.
class ScratchDir {
public:
    static ScratchDir& get() {
        static ScratchDir dir;
        return dir;
    }
    // Empties the folder and returns it.
    const std::filesystem::path& fresh() {
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) {
            std::filesystem::remove_all(entry.path(), ec);
        }
        return path_;
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const std::filesystem::path& path() const { return path_; }

private:
    ScratchDir() {
        // Memory-backed when it can be: thousands of files a second would otherwise wait on the disk.
        std::error_code ec;
        const bool shm = std::getenv("TMPDIR") == nullptr && std::filesystem::is_directory("/dev/shm", ec);
        const std::filesystem::path root =
            shm ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
        path_ = root / ("headscope-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::filesystem::path path_;
};

inline void write_file(const std::string& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) finding("cannot write the scratch file " + path);
}

// Reads little integers off the front of the input (0 once it runs out).
class Bytes {
public:
    Bytes(const std::uint8_t* data, std::size_t size) : data_(reinterpret_cast<const char*>(data), size) {}
    std::uint8_t u8() {
        if (data_.empty()) return 0;
        const auto b = static_cast<std::uint8_t>(data_.front());
        data_.remove_prefix(1);
        return b;
    }
    std::uint16_t u16() {
        const std::uint16_t lo = u8();
        return static_cast<std::uint16_t>(lo | (u8() << 8));
    }
    std::string_view rest() const { return data_; }

private:
    std::string_view data_;
};

}   // namespace headscope::fuzz
