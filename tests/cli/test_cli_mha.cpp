// `headscope-cli mha` through the binary: the golden cases, --help, and every kind of
// bad input (exit 2, one line on stderr, no output file written or changed).

#include "core/safetensors.h"
#include "test_support.h"

#include <cstdlib>
#include <sys/wait.h>

using namespace headscope;
using headscope::test::TempDir;

namespace {

struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

RunResult run_cli(const std::vector<std::string>& args) {
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

int count_lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The contract for bad input: exit 2, exactly one line on stderr holding `needle`.
void check_bad_input(const RunResult& r, const std::string& needle) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(needle) != std::string::npos, "stderr lacks: " << needle);
}

std::vector<std::string> golden_args(const test::GoldenCase& c, const std::string& out) {
    std::vector<std::string> args = {"mha", "--weights", c.folder + "/weights.safetensors", "--input",
                                     c.folder + "/input.safetensors", "--heads", std::to_string(c.heads), "--out", out};
    if (c.kv) args.insert(args.end(), {"--kv", c.folder + "/kv.safetensors"});
    if (c.keep) args.insert(args.end(), {"--keep", c.folder + "/keep.safetensors"});
    if (c.causal) args.push_back("--causal");
    if (!c.disable_heads.empty()) {
        std::string list;
        for (int h : c.disable_heads) list.append(list.empty() ? "" : ",").append(std::to_string(h));
        args.insert(args.end(), {"--disable-heads", list});
    }
    return args;
}

// A small valid layer (separate projections, E = D = 8) and input, for the bad-input tests.
struct Fixture {
    TempDir dir;
    std::string weights = dir.file("w.safetensors");
    std::string input = dir.file("x.safetensors");
    std::string out = dir.file("out.safetensors");
    std::vector<float> w88 = std::vector<float>(64, 0.1f);
    std::vector<float> x = std::vector<float>(2 * 3 * 8, 0.5f);

    Fixture() {
        write_safetensors(weights, {tensor_f32("q_proj.weight", {8, 8}, w88), tensor_f32("k_proj.weight", {8, 8}, w88),
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

} // namespace

TEST_CASE("cli mha reproduces PyTorch on every golden case" * doctest::test_suite("golden")) {
    TempDir dir;
    for (const auto& c : test::golden_cases()) {
        CAPTURE(c.name);
        const std::string out = dir.file(c.name + ".safetensors");
        const RunResult r = run_cli(golden_args(c, out));
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.err.empty());
        const auto ours = SafetensorsFile::open(out);
        const auto expected = SafetensorsFile::open(c.folder + "/expected.safetensors");
        for (const std::string name : {"weights", "context", "output"}) {
            const TensorView& a = ours.get(name);
            const TensorView& b = expected.get(name);
            CHECK(a.dtype == DType::F32);
            REQUIRE(a.shape == b.shape);
            const auto va = a.to_floats();
            const auto vb = b.to_floats();
            const double diff = test::max_abs_diff(va.data(), vb.data(), va.size());
            CHECK_MESSAGE(diff <= test::golden_tolerance, c.name << " " << name << ": max |diff| = " << diff);
            MESSAGE(c.name << " " << name << ": max |cli - PyTorch| = " << diff);
        }
    }
}

TEST_CASE("cli --help on the program and on mha goes to stdout with exit 0") {
    const RunResult top = run_cli({"--help"});
    CHECK(top.exit_code == 0);
    CHECK(top.out.find("mha") != std::string::npos);
    const RunResult mha = run_cli({"mha", "--help"});
    CHECK(mha.exit_code == 0);
    CHECK(mha.err.empty());
    for (const char* flag : {"--weights", "--input", "--heads", "--kv", "--causal", "--keep", "--disable-heads", "--out"}) {
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
    SUBCASE("zero heads") { check_bad_input(run_cli(f.args({"--heads", "0"})), "at least 1"); }
    SUBCASE("keep mask of the wrong shape") {
        const std::string keep = f.dir.file("keep.safetensors");
        write_safetensors(keep, {tensor_f32("keep", {3, 4}, std::span(f.x).first(12))});
        check_bad_input(run_cli(f.args({"--keep", keep})), "tensor 'keep': expected shape [Tq, Tk] = [3, 3]");
    }
    SUBCASE("keep mask holding NaN") {
        const std::string keep = f.dir.file("keep.safetensors");
        std::vector<float> nan_mask(9, 1.0f);
        nan_mask[4] = std::nanf("");
        write_safetensors(keep, {tensor_f32("keep", {3, 3}, nan_mask)});
        check_bad_input(run_cli(f.args({"--keep", keep})), "NaN");
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
        write_safetensors(f.weights, {tensor_f32("q_proj.weight", {8, 8}, f.w88), tensor_f32("k_proj.weight", {8, 8}, f.w88),
                                      tensor_f32("v_proj.weight", {8, 8}, f.w88),
                                      tensor_f32("out_proj.weight", {4, 16}, f.w88)});
        check_bad_input(run_cli(f.args()), "'out_proj.weight': expected shape [E, D] = [8, 8], got [4, 16]");
    }
    SUBCASE("both layouts in one file") {
        std::vector<float> packed(24 * 8, 0.1f);
        write_safetensors(f.weights, {tensor_f32("in_proj_weight", {24, 8}, packed),
                                      tensor_f32("q_proj.weight", {8, 8}, f.w88), tensor_f32("out_proj.weight", {8, 8}, f.w88)});
        check_bad_input(run_cli(f.args()), "ambiguous");
    }
    SUBCASE("packed weights with a bad first dimension") {
        std::vector<float> packed(20 * 8, 0.1f);
        write_safetensors(f.weights, {tensor_f32("in_proj_weight", {20, 8}, packed), tensor_f32("out_proj.weight", {8, 8}, f.w88)});
        check_bad_input(run_cli(f.args()), "expected shape [3E, E] = [24, 8], got [20, 8]");
    }
    SUBCASE("an unknown tensor in the weights") {
        write_safetensors(f.weights, {tensor_f32("q_proj.weight", {8, 8}, f.w88), tensor_f32("k_proj.weight", {8, 8}, f.w88),
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
        {"\x05\0\0", "too short"},
        {header(entry, 96, 5000), "past the end of the file"},
        {header("{not json}", 0), "not valid JSON"},
        {header(R"({"x":{"dtype":"Q4","shape":[3,8],"data_offsets":[0,96]}})", 96), "unsupported dtype 'Q4'"},
        {header(entry, 50), "past the end of the data"},
        {header(R"({"x":{"dtype":"F32","shape":[3,8],"data_offsets":[0,96]},"y":{"dtype":"F32","shape":[2],"data_offsets":[90,98]}})",
                98), "overlaps"},
        {header(R"({"x":{"dtype":"F32","shape":[4,8],"data_offsets":[0,96]}})", 96), "needs 128 bytes"},
    };
    for (const auto& [bytes, needle] : bad_files) {
        CAPTURE(needle);
        test::write_bytes(f.input, bytes);
        const RunResult r = run_cli(f.args());
        check_bad_input(r, needle);
        CHECK(r.err.find(f.input) != std::string::npos);
        CHECK(test::read_bytes(f.out) == previous);
    }
    // Weights, kv and keep files go through the same checks.
    write_safetensors(f.input, {tensor_f32("x", {2, 3, 8}, f.x)});
    check_bad_input(run_cli(f.args({"--kv", f.dir.path().string()})), "is a directory");
    check_bad_input(run_cli(f.args({"--keep", f.dir.file("absent.safetensors")})), "cannot open");
    test::write_bytes(f.weights, "");
    check_bad_input(run_cli(f.args()), f.weights + ": file is empty");
    CHECK(test::read_bytes(f.out) == previous);
    CHECK(std::distance(std::filesystem::directory_iterator(f.dir.path()), {}) == 3);   // no temp file left
}

TEST_CASE("cli mha: unwritable outputs fail cleanly") {
    Fixture f;
    check_bad_input(run_cli({"mha", "--weights", f.weights, "--input", f.input, "--heads", "2", "--out",
                             f.dir.file("no/such/folder/out.safetensors")}),
                    "does not exist");
    check_bad_input(run_cli({"mha", "--weights", f.weights, "--input", f.input, "--heads", "2", "--out",
                             f.dir.path().string()}),
                    "is a directory");
}
