// `headscope-cli mha` through the binary against PyTorch: every golden case of
// tools/make_golden.py, every output tensor, within an absolute 1e-5.

#include "cli/cli_runner.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

using namespace headscope;
using namespace headscope::test;

namespace {

std::vector<std::string> golden_args(const test::GoldenCase& c, const std::string& out) {
    std::vector<std::string> args = {"mha",
                                     "--weights",
                                     c.folder + "/weights.safetensors",
                                     "--input",
                                     c.folder + "/input.safetensors",
                                     "--heads",
                                     std::to_string(c.heads),
                                     "--out",
                                     out};
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

}   // namespace

TEST_CASE("cli mha reproduces PyTorch on every golden case") {
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
