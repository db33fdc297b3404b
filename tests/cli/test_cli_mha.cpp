// `headscope-cli mha` through the binary: --help, valid runs, and every kind of bad
// input (exit 2, one line on stderr, no output file written or changed). The golden
// comparison with PyTorch is in test_cli_golden.cpp.

#include "cli/cli_runner.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <sys/stat.h>

using namespace headscope;
using namespace headscope::test;

namespace {

// A small valid layer (separate projections, E = D = 8) and input, for the bad-input tests.
struct Fixture {
    TempDir dir;
    std::string weights = dir.file("w.safetensors");
    std::string input = dir.file("x.safetensors");
    std::string out = dir.file("out.safetensors");
    std::vector<float> w88 = std::vector<float>(64, 0.1f);
    std::vector<float> x = std::vector<float>(2 * 3 * 8, 0.5f);

    Fixture() {
        write_safetensors(weights,
                          {tensor_f32("q_proj.weight", {8, 8}, w88), tensor_f32("k_proj.weight", {8, 8}, w88),
                           tensor_f32("v_proj.weight", {8, 8}, w88), tensor_f32("out_proj.weight", {8, 8}, w88)});
        write_safetensors(input, {tensor_f32("x", {2, 3, 8}, x)});
    }
    // The command line for this fixture; --heads 2 unless `extra` gives its own.
    std::vector<std::string> args(std::initializer_list<std::string> extra = {}) const {
        std::vector<std::string> a = {"mha", "--weights", weights, "--input", input, "--out", out};
        if (std::find(extra.begin(), extra.end(), "--heads") == extra.end()) a.insert(a.end(), {"--heads", "2"});
        a.insert(a.end(), extra);
        return a;
    }
};

}   // namespace

TEST_CASE("cli --help on the program and on mha goes to stdout with exit 0") {
    const RunResult top = run_cli({"--help"});
    CHECK(top.exit_code == 0);
    CHECK(top.out.find("mha") != std::string::npos);
    const RunResult mha = run_cli({"mha", "--help"});
    CHECK(mha.exit_code == 0);
    CHECK(mha.err.empty());
    for (const char* flag :
         {"--weights", "--input", "--heads", "--kv", "--causal", "--keep", "--disable-heads", "--out"}) {
        CHECK_MESSAGE(mha.out.find(flag) != std::string::npos, flag);
    }
}

TEST_CASE("cli mha: a valid run writes the three outputs with the contract's shapes") {
    Fixture f;
    const RunResult r = run_cli(f.args({"--causal", "--disable-heads", "1"}));
    REQUIRE(r.exit_code == 0);
    const auto out = SafetensorsFile::open(f.out);
    CHECK(out.get("weights").shape == Shape{2, 2, 3, 3});
    CHECK(out.get("context").shape == Shape{2, 3, 8});
    CHECK(out.get("output").shape == Shape{2, 3, 8});
    // 2-D input: B = 1 is still carried.
    write_safetensors(f.input, {tensor_f32("x", {3, 8}, std::span(f.x).first(24))});
    REQUIRE(run_cli(f.args()).exit_code == 0);
    CHECK(SafetensorsFile::open(f.out).get("weights").shape == Shape{1, 2, 3, 3});
}

TEST_CASE("cli mha: bad command lines") {
    Fixture f;
    check_bad_input(run_cli(f.args({"--frobnicate"})), "--frobnicate");
    check_bad_input(run_cli({"mha", "--input", f.input, "--heads", "2", "--out", f.out}), "--weights");
    check_bad_input(run_cli(f.args({"--heads", "two"})), "--heads");
    check_bad_input(run_cli(f.args({"--disable-heads", "2"})), "--disable-heads");
    check_bad_input(run_cli(f.args({"--disable-heads", "0,x"})), "--disable-heads");
    check_bad_input(run_cli(f.args({"--disable-heads", "-1"})), "--disable-heads");
    check_bad_input(run_cli(f.args({"--disable-heads", ""})), "--disable-heads: empty list");
    check_bad_input(run_cli(f.args({"--disable-heads", " 1"})), "' 1' is not");
    check_bad_input(run_cli(f.args({"--disable-heads", "+0"})), "'+0' is not");
    check_bad_input(run_cli(f.args({"--disable-heads", "0,,1"})), "empty item");
    check_bad_input(run_cli({"--frob"}), "unknown option '--frob'");
    check_bad_input(run_cli({"frobnicate"}), "frobnicate");
    CHECK_FALSE(std::filesystem::exists(f.out));
}

TEST_CASE("cli mha: bad shapes") {
    Fixture f;
    SUBCASE("input width is not E") {
        write_safetensors(f.input, {tensor_f32("x", {2, 3, 6}, std::span(f.x).first(36))});
        check_bad_input(run_cli(f.args()), "expected width E = 8");
    }
    SUBCASE("D not divisible by H") { check_bad_input(run_cli(f.args({"--heads", "3"})), "not divisible by 3"); }
    SUBCASE("zero heads") {
        check_bad_input(run_cli(f.args({"--heads", "0"})), "--heads: Value 0 not in range 1 to 4096");
    }
    SUBCASE("keep mask of the wrong shape") {
        const std::string keep = f.dir.file("keep.safetensors");
        write_safetensors(keep, {tensor_f32("keep", {3, 4}, std::span(f.x).first(12))});
        check_bad_input(run_cli(f.args({"--keep", keep})), "tensor 'keep': expected shape [Tq, Tk] = [3, 3]");
    }
    SUBCASE("kv of the wrong width") {
        const std::string kv = f.dir.file("kv.safetensors");
        write_safetensors(kv, {tensor_f32("x", {2, 4, 6}, std::span(f.x).first(48))});
        check_bad_input(run_cli(f.args({"--kv", kv})), "expected width Ek = 8");
    }
    SUBCASE("kv with another batch size") {
        const std::string kv = f.dir.file("kv.safetensors");
        write_safetensors(kv, {tensor_f32("x", {3, 2, 8}, std::span(f.x).first(48))});
        check_bad_input(run_cli(f.args({"--kv", kv})), "batch size 3");
    }
    SUBCASE("a sequence of length 0") {
        write_safetensors(f.input, {tensor_f32("x", {2, 0, 8}, {})});
        check_bad_input(run_cli(f.args()), "empty dimension");
    }
    SUBCASE("input of rank 4") {
        write_safetensors(f.input, {tensor_f32("x", {1, 2, 3, 8}, f.x)});
        check_bad_input(run_cli(f.args()), "expected shape [B, Tq, E]");
    }
    SUBCASE("input without tensor x") {
        write_safetensors(f.input, {tensor_f32("y", {2, 3, 8}, f.x)});
        check_bad_input(run_cli(f.args()), "no tensor 'x'");
    }
    SUBCASE("integer input") {
        const std::vector<std::int64_t> ids(24, 1);
        write_safetensors(f.input, {tensor_i64("x", {3, 8}, ids)});
        check_bad_input(run_cli(f.args()), "floating dtype");
    }
    SUBCASE("weight of the wrong shape") {
        write_safetensors(f.weights,
                          {tensor_f32("q_proj.weight", {8, 8}, f.w88), tensor_f32("k_proj.weight", {8, 8}, f.w88),
                           tensor_f32("v_proj.weight", {8, 8}, f.w88), tensor_f32("out_proj.weight", {4, 16}, f.w88)});
        check_bad_input(run_cli(f.args()), "'out_proj.weight': expected shape [E, D] = [8, 8], got [4, 16]");
    }
    SUBCASE("both layouts in one file") {
        std::vector<float> packed(24 * 8, 0.1f);
        write_safetensors(f.weights,
                          {tensor_f32("in_proj_weight", {24, 8}, packed), tensor_f32("q_proj.weight", {8, 8}, f.w88),
                           tensor_f32("out_proj.weight", {8, 8}, f.w88)});
        check_bad_input(run_cli(f.args()), "ambiguous");
    }
    SUBCASE("packed weights with a bad first dimension") {
        std::vector<float> packed(20 * 8, 0.1f);
        write_safetensors(
            f.weights, {tensor_f32("in_proj_weight", {20, 8}, packed), tensor_f32("out_proj.weight", {8, 8}, f.w88)});
        check_bad_input(run_cli(f.args()), "expected shape [3E, E] = [24, 8], got [20, 8]");
    }
    SUBCASE("an unknown tensor in the weights") {
        write_safetensors(f.weights,
                          {tensor_f32("q_proj.weight", {8, 8}, f.w88), tensor_f32("k_proj.weight", {8, 8}, f.w88),
                           tensor_f32("v_proj.weight", {8, 8}, f.w88), tensor_f32("out_proj.weight", {8, 8}, f.w88),
                           tensor_f32("out_proj.weights", {8, 8}, f.w88)});
        check_bad_input(run_cli(f.args()), "unexpected tensor 'out_proj.weights'");
    }
    CHECK_FALSE(std::filesystem::exists(f.out));
}

TEST_CASE("cli mha: bad safetensors files never crash and write nothing") {
    Fixture f;
    const std::string previous = "an earlier result the user keeps";
    test::write_bytes(f.out, previous);
    // The header length is the JSON's own unless `claimed` says otherwise.
    const auto header = [](const std::string& json, std::size_t data_bytes, std::uint64_t claimed = 0) {
        const std::uint64_t length = claimed ? claimed : json.size();
        std::string bytes(8, '\0');
        std::memcpy(bytes.data(), &length, 8);
        return bytes + json + std::string(data_bytes, '\0');
    };
    const std::string entry = R"({"x":{"dtype":"F32","shape":[3,8],"data_offsets":[0,96]}})";
    const std::vector<std::pair<std::string, std::string>> bad_files = {
        {"", "empty"},
        {std::string("\x05\0\0", 3), "is 3 bytes, too short"},
        {header(entry, 96, 5000), "past the end of the file"},
        {header("{not json}", 0), "not valid JSON"},
        {header(R"({"x":{"dtype":"Q4","shape":[3,8],"data_offsets":[0,96]}})", 96), "unsupported dtype 'Q4'"},
        {header(entry, 50), "past the end of the data"},
        {header(
             R"({"x":{"dtype":"F32","shape":[3,8],"data_offsets":[0,96]},"y":{"dtype":"F32","shape":[2],"data_offsets":[90,98]}})",
             98),
         "overlaps"},
        {header(R"({"x":{"dtype":"F32","shape":[4,8],"data_offsets":[0,96]}})", 96), "needs 128 bytes"},
    };
    for (const auto& bad : bad_files) {
        // Named apart, not as a structured binding: CAPTURE's lambda cannot capture one in clang < 16.
        const std::string& bytes = bad.first;
        const std::string& needle = bad.second;
        CAPTURE(needle);
        test::write_bytes(f.input, bytes);
        const RunResult r = run_cli(f.args());
        check_bad_input(r, needle);
        CHECK(r.err.find(f.input) != std::string::npos);
        CHECK(test::read_bytes(f.out) == previous);
    }
    // The same files as --weights, --kv and --keep: the same checks, naming that file.
    write_safetensors(f.input, {tensor_f32("x", {2, 3, 8}, f.x)});
    const std::string bad_path = f.dir.file("bad.safetensors");
    const std::string weights = f.weights;
    for (const auto& bad : bad_files) {
        // Named apart, not as a structured binding: CAPTURE's lambda cannot capture one in clang < 16.
        const std::string& bytes = bad.first;
        const std::string& needle = bad.second;
        CAPTURE(needle);
        test::write_bytes(bad_path, bytes);
        for (const char* flag : {"--weights", "--kv", "--keep"}) {
            CAPTURE(flag);
            std::vector<std::string> a = {"mha",     "--weights", weights, "--input", f.input,
                                          "--heads", "2",         "--out", f.out};
            if (std::string(flag) == "--weights") {
                a[2] = bad_path;
            } else {
                a.insert(a.end(), {flag, bad_path});
            }
            const RunResult r = run_cli(a);
            check_bad_input(r, needle);
            CHECK(r.err.find(bad_path) != std::string::npos);
        }
    }
    std::filesystem::remove(bad_path);
    check_bad_input(run_cli(f.args({"--kv", f.dir.path().string()})), "is a directory");
    check_bad_input(run_cli(f.args({"--keep", f.dir.file("absent.safetensors")})), "no such file");
    test::write_bytes(f.weights, "");
    check_bad_input(run_cli(f.args()), f.weights + ": file is empty");
    CHECK(test::read_bytes(f.out) == previous);
    CHECK(std::distance(std::filesystem::directory_iterator(f.dir.path()), {}) == 3);   // no temp file left
}

TEST_CASE("cli mha: masks are nonzero = allowed on the stored value, NaN and tiny F64 included") {
    Fixture f;
    const std::string keep = f.dir.file("keep.safetensors");
    // Row 0 allows only key 1 (by NaN), row 1 only key 2 (by 1e-50, which is 0 as a float), row 2 none.
    std::vector<double> values(9, 0.0);
    values[1] = std::nan("");
    values[5] = 1e-50;
    write_safetensors(keep, {{"keep", DType::F64, {3, 3}, std::as_bytes(std::span(values))}});
    REQUIRE(run_cli(f.args({"--keep", keep})).exit_code == 0);
    const auto w = SafetensorsFile::open(f.out).get("weights").to_floats();   // [2, 2, 3, 3]
    CHECK(w[1] == 1.0f);
    CHECK(w[5] == 1.0f);
    CHECK((w[6] == 0.0f && w[7] == 0.0f && w[8] == 0.0f));
}

TEST_CASE("cli mha: key/value widths: cross-attention needs Ek == Ev, self-attention needs E") {
    TempDir dir;
    std::vector<float> q(8 * 8, 0.1f), k(8 * 6, 0.1f), v(8 * 5, 0.1f), o(8 * 8, 0.1f), x(3 * 8, 0.3f), kv(4 * 6, 0.2f);
    const std::string weights = dir.file("w.safetensors");
    const std::string input = dir.file("x.safetensors");
    const std::string kv_file = dir.file("kv.safetensors");
    write_safetensors(input, {tensor_f32("x", {3, 8}, x)});
    write_safetensors(kv_file, {tensor_f32("x", {4, 6}, kv)});
    write_safetensors(weights, {tensor_f32("q_proj_weight", {8, 8}, q), tensor_f32("k_proj_weight", {8, 6}, k),
                                tensor_f32("v_proj_weight", {8, 5}, v), tensor_f32("out_proj.weight", {8, 8}, o)});
    const std::vector<std::string> base = {
        "mha", "--weights", weights, "--input", input, "--heads", "2", "--out", dir.file("out.safetensors")};
    std::vector<std::string> cross = base;
    cross.insert(cross.end(), {"--kv", kv_file});
    check_bad_input(run_cli(cross), "Ek = 6 but v_proj Ev = 5");
    // kdim = vdim = 6 without --kv: the input (width 8) cannot feed them.
    write_safetensors(weights, {tensor_f32("q_proj_weight", {8, 8}, q), tensor_f32("k_proj_weight", {8, 6}, k),
                                tensor_f32("v_proj_weight", {8, 6}, k), tensor_f32("out_proj.weight", {8, 8}, o)});
    check_bad_input(run_cli(base), "pass --kv for cross-attention");
    REQUIRE(run_cli(cross).exit_code == 0);
}

TEST_CASE("cli mha: outputs too large for memory are refused up front") {
    TempDir dir;
    std::vector<float> w(4, 0.5f);
    const std::vector<float> x(60000, 0.1f);   // Tq = 60000, E = 1: weights would be 3.6e9 values
    write_safetensors(dir.file("w.safetensors"), {tensor_f32("q_proj.weight", {1, 1}, std::span(w).first(1)),
                                                  tensor_f32("k_proj.weight", {1, 1}, std::span(w).first(1)),
                                                  tensor_f32("v_proj.weight", {1, 1}, std::span(w).first(1)),
                                                  tensor_f32("out_proj.weight", {1, 1}, std::span(w).first(1))});
    write_safetensors(dir.file("x.safetensors"), {tensor_f32("x", {60000, 1}, x)});
    check_bad_input(run_cli({"mha", "--weights", dir.file("w.safetensors"), "--input", dir.file("x.safetensors"),
                             "--heads", "1", "--out", dir.file("out.safetensors")}),
                    "over the limit");
    CHECK_FALSE(std::filesystem::exists(dir.file("out.safetensors")));
}

TEST_CASE("cli mha: unwritable outputs fail cleanly") {
    Fixture f;
    check_bad_input(run_cli({"mha", "--weights", f.weights, "--input", f.input, "--heads", "2", "--out",
                             f.dir.file("no/such/folder/out.safetensors")}),
                    "does not exist");
    check_bad_input(
        run_cli({"mha", "--weights", f.weights, "--input", f.input, "--heads", "2", "--out", f.dir.path().string()}),
        "is a directory");
    // A long (but valid) output name still works: the temporary name is kept short.
    const std::string long_name = f.dir.file(std::string(240, 'o') + ".safetensors");
    CHECK(run_cli({"mha", "--weights", f.weights, "--input", f.input, "--heads", "2", "--out", long_name}).exit_code ==
          0);
    CHECK(std::filesystem::exists(long_name));
}
