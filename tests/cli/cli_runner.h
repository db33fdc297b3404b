#pragma once
// Running headscope-cli from tests: its exit code, stdout and stderr, and the
// contract's check for bad input (exit 2, exactly one line on stderr); reading what
// `dump` wrote.

#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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
    RunResult r;
    r.exit_code = test::run_command(command, streams.file("err"));
    r.out = test::read_bytes(streams.file("out"));
    r.err = test::read_bytes(streams.file("err"));
    return r;
}

inline int count_lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// The contract for bad input: exit 2, exactly one line on stderr holding `needle`.
inline void check_bad_input(const RunResult& r, const std::string& needle) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(needle) != std::string::npos, "stderr lacks: " << needle);
}

// Every element of a tensor in an output file, as float.
inline std::vector<float> floats(const SafetensorsFile& f, const std::string& name) { return f.get(name).to_floats(); }

// Tensor `key` of `ours` against the same tensor in `expected`: present, shaped `shape`,
// every element within an absolute `tolerance`. Returns ours, for further checks.
inline std::vector<float> check_close(const SafetensorsFile& ours, const SafetensorsFile& expected,
                                      const std::string& key, const Shape& shape, double tolerance) {
    CAPTURE(key);
    REQUIRE(ours.contains(key));
    CHECK(ours.get(key).shape == shape);
    std::vector<float> a = floats(ours, key);
    const std::vector<float> b = floats(expected, key);
    REQUIRE(a.size() == b.size());
    const double diff = max_abs_diff(a.data(), b.data(), a.size());
    CHECK_MESSAGE(diff <= tolerance, key << ": max |diff| = " << diff);
    return a;
}

// Attention maps [..., T]: every row finite and summing to 1 within 1e-5 (no row fully masked).
inline void check_rows_sum_to_one(const std::vector<float>& w, std::int64_t T) {
    for (std::size_t row = 0; row < w.size() / static_cast<std::size_t>(T); ++row) {
        double sum = 0.0;
        for (std::int64_t j = 0; j < T; ++j) sum += w[row * static_cast<std::size_t>(T) + static_cast<std::size_t>(j)];
        REQUIRE(std::isfinite(sum));
        CHECK(std::abs(sum - 1.0) <= 1e-5);
    }
}

// The run succeeded and its stdout holds every one of `needles`.
inline void check_output_has(const RunResult& r, const std::vector<std::string>& needles) {
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    for (const std::string& needle : needles)
        CHECK_MESSAGE(r.out.find(needle) != std::string::npos, "stdout lacks: " << needle);
}

// An I64 tensor (input_ids) of an output file.
inline std::vector<std::int64_t> int64s(const SafetensorsFile& f, const std::string& name) {
    const TensorView& t = f.get(name);
    REQUIRE(t.dtype == DType::I64);
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.numel()));
    REQUIRE(t.bytes.size() == v.size() * sizeof(std::int64_t));
    std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
    return v;
}

// dump's `tokens` metadata: the labels of the T positions.
inline std::vector<std::string> tokens_of(const SafetensorsFile& f) {
    return nlohmann::json::parse(f.metadata().at("tokens")).get<std::vector<std::string>>();
}

// Ids as --tokens takes them: "1,2,3".
inline std::string joined_ids(const std::vector<std::int64_t>& ids) {
    std::string text;
    for (const std::int64_t id : ids) text.append(text.empty() ? "" : ",").append(std::to_string(id));
    return text;
}

// headscope-cli dump --model MODEL INPUT... --out OUT EXTRA...
inline RunResult run_dump(const std::string& model, const std::vector<std::string>& input, const std::string& out,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"dump", "--model", model};
    args.insert(args.end(), input.begin(), input.end());
    args.push_back("--out");
    args.push_back(out);
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
}

// tests/golden/<family>/cases.json, the manifest `script` writes; its absolute tolerance
// is at most 1e-4.
inline nlohmann::json read_manifest(const std::string& family, const std::string& script) {
    std::ifstream in(golden_dir() + "/" + family + "/cases.json");
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/" << family << "/cases.json (run tools/" << script << ")");
    nlohmann::json manifest = nlohmann::json::parse(in);
    CHECK(manifest.at("tolerance").get<double>() <= 1e-4);
    return manifest;
}

// dump of a text model's golden case {checkpoint, text | ids} into `out`, which must succeed
// with nothing on stderr.
inline SafetensorsFile dump_case(const nlohmann::json& c, const std::string& checkpoints, const std::string& out) {
    const std::vector<std::string> input =
        c.contains("text")
            ? std::vector<std::string>{"--text", c.at("text").get<std::string>()}
            : std::vector<std::string>{"--tokens", joined_ids(c.at("ids").get<std::vector<std::int64_t>>())};
    const RunResult r = run_dump(checkpoints + "/" + c.at("checkpoint").get<std::string>(), input, out);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    return SafetensorsFile::open(out);
}

// A copy of the folder `from` (a committed checkpoint) in `dir`, for tests that break one file.
inline std::string copy_folder(const TempDir& dir, const std::string& from) {
    const std::filesystem::path to = dir.path() / std::filesystem::path(from).filename();
    std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
    return to.string();
}

}   // namespace headscope::test
