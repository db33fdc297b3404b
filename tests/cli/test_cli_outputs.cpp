// No subcommand may modify its own inputs, and no --out that is not a regular file (or a
// link to one) is ever replaced: every writing command through the binary, each refusal
// exit 2 with one line before any work, every input's bytes the same afterwards.

#include "cli/cli_runner.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sys/stat.h>
#include <sys/sysmacros.h>

using namespace headscope;
using namespace headscope::test;
namespace fs = std::filesystem;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints";

// Every file under `folder` and its bytes.
std::map<std::string, std::string> contents(const std::string& folder) {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(folder)) {
        if (entry.is_regular_file()) files[entry.path().string()] = read_bytes(entry.path().string());
    }
    return files;
}

// A copy of the tiny GPT-2 checkpoint and a text file, in one temp folder.
struct Inputs {
    TempDir dir;
    std::string model = dir.file("gpt2");
    std::string text = dir.file("text.txt");
    Inputs() {
        fs::copy(checkpoints + "/gpt2_tiny", model, fs::copy_options::recursive);
        write_bytes(text, "The cat sat on the mat.");
    }
};

}   // namespace

TEST_CASE("outputs: an --out that is an input is refused, through any name, and the input is unchanged") {
    Inputs in;
    const auto before = contents(in.dir.path().string());
    const auto dump = [&](const std::string& out) {
        return run_cli({"dump", "--model", in.model, "--text-file", in.text, "--out", out});
    };
    check_bad_input(dump(in.model + "/model.safetensors"),
                    "is the same file as " + in.model + "/model.safetensors of --model " + in.model);
    check_bad_input(dump(in.text), "--out " + in.text + ": is the same file as --text-file " + in.text);
    fs::create_hard_link(in.text, in.dir.file("hard.txt"));
    check_bad_input(dump(in.dir.file("hard.txt")), "is the same file as --text-file");
    fs::create_symlink(in.model + "/config.json", in.dir.file("soft.json"));
    check_bad_input(run_cli({"export-weights", "--model", in.model, "--out", in.dir.file("soft.json")}),
                    "is the same file as " + in.model + "/config.json of --model");
    check_bad_input(run_cli({"render", "--model", in.model, "--text", "a b", "--out", in.model + "/new.png"}),
                    "lies inside --model " + in.model + ", which is being read");
    check_bad_input(run_cli({"analyze", "--model", in.model, "--text", "a b", "--out", in.model + "/m.json"}),
                    "lies inside --model");
    fs::remove(in.dir.file("hard.txt"));
    fs::remove(in.dir.file("soft.json"));
    CHECK(contents(in.dir.path().string()) == before);
    CHECK(!fs::exists(in.model + "/new.png"));
}

TEST_CASE("outputs: mha refuses an --out that is its --weights, --input or --keep") {
    TempDir dir;
    const std::vector<float> w(64, 0.1f), x(24, 0.5f);
    const std::string weights = dir.file("w.safetensors"), input = dir.file("x.safetensors");
    write_safetensors(weights, {tensor_f32("q_proj.weight", {8, 8}, w), tensor_f32("k_proj.weight", {8, 8}, w),
                                tensor_f32("v_proj.weight", {8, 8}, w), tensor_f32("out_proj.weight", {8, 8}, w)});
    write_safetensors(input, {tensor_f32("x", {3, 8}, x)});
    const auto before = contents(dir.path().string());
    const auto mha = [&](const std::string& out) {
        return run_cli({"mha", "--weights", weights, "--input", input, "--heads", "2", "--out", out});
    };
    check_bad_input(mha(input), "--out " + input + ": is the same file as --input " + input);
    check_bad_input(mha(weights), "is the same file as --weights");
    fs::create_hard_link(input, dir.file("also-x"));
    check_bad_input(mha(dir.file("also-x")), "is the same file as --input");
    fs::remove(dir.file("also-x"));
    CHECK(contents(dir.path().string()) == before);
}

TEST_CASE("outputs: a symlink is written through, FIFOs, devices and folders are refused, untouched") {
    Inputs in;
    // Through a link: the file it names gets the PNG, the link stays a link.
    write_bytes(in.dir.file("picture.png"), "old");
    fs::create_symlink(in.dir.file("picture.png"), in.dir.file("link.png"));
    const RunResult written =
        run_cli({"render", "--model", in.model, "--text", "a b", "--out", in.dir.file("link.png")});
    CHECK(written.exit_code == 0);
    CHECK(fs::is_symlink(in.dir.file("link.png")));
    CHECK(read_bytes(in.dir.file("picture.png")).substr(1, 3) == "PNG");

    const auto before = contents(in.dir.path().string());
    REQUIRE(::mkfifo(in.dir.file("fifo").c_str(), 0644) == 0);
    check_bad_input(run_cli({"export-weights", "--model", in.model, "--out", in.dir.file("fifo")}),
                    "--out " + in.dir.file("fifo") + ": is a FIFO; expected a regular file (or a link to one)");
    CHECK(fs::is_fifo(in.dir.file("fifo")));
    fs::create_directory(in.dir.file("folder.json"));
    check_bad_input(run_cli({"analyze", "--model", in.model, "--text", "a b", "--out", in.dir.file("folder.json")}),
                    ": is a directory; expected a regular file");
    if (::mknod(in.dir.file("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        check_bad_input(run_cli({"dump", "--model", in.model, "--text", "a", "--out", in.dir.file("null")}),
                        ": is a character device;");
        CHECK(fs::is_character_file(in.dir.file("null")));
    } else {
        MESSAGE("mknod needs CAP_MKNOD: the device node case is left to the writer's own test");
    }
    check_bad_input(run_cli({"dump", "--model", in.model, "--text", "a", "--out", in.dir.file("no/such/out.st")}),
                    "--out " + in.dir.file("no/such/out.st") + ": the folder " + in.dir.file("no/such") +
                        " does not exist");
    CHECK(contents(in.dir.path().string()) == before);
}
