// Hugging Face GPT-2 checkpoint folders through headscope-cli (the dump against PyTorch
// is test_cli_families.cpp's): causal masking and its override, info, and broken
// checkpoints, each refused with one line.

#include "cli/cli_runner.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;
const std::string checkpoints = source_dir + "/tests/checkpoints";

}   // namespace

TEST_CASE("gpt2: --causal off and --disable-heads change the maps") {
    TempDir dir;
    const std::string model = checkpoints + "/gpt2_tiny";
    const std::vector<std::string> text = {"--text", "the cat sat on the mat"};
    REQUIRE(run_dump(model, text, dir.file("p.safetensors")).exit_code == 0);
    REQUIRE(run_dump(model, text, dir.file("o.safetensors"), {"--causal", "off"}).exit_code == 0);
    REQUIRE(run_dump(model, text, dir.file("a.safetensors"), {"--disable-heads", "0.1"}).exit_code == 0);
    const auto plain = SafetensorsFile::open(dir.file("p.safetensors"));
    const auto open = SafetensorsFile::open(dir.file("o.safetensors"));
    const auto ablated = SafetensorsFile::open(dir.file("a.safetensors"));
    CHECK(plain.metadata().at("causal") == "on");
    CHECK(open.metadata().at("causal") == "off");
    for (const char* key : {"attn.0", "attn.1", "logits"}) CHECK(floats(open, key) != floats(plain, key));
    const auto w = floats(open, "attn.0");
    const std::int64_t T = plain.get("attn.0").shape[1];
    double above = 0.0;
    for (std::int64_t i = 0; i < T; ++i) {
        for (std::int64_t j = i + 1; j < T; ++j) above += w[static_cast<std::size_t>(i * T + j)];
    }
    CHECK(above > 0.1);
    CHECK(floats(ablated, "attn.0") == floats(plain, "attn.0"));
    CHECK(floats(ablated, "attn.1") != floats(plain, "attn.1"));
}

TEST_CASE("gpt2: info describes the architecture") {
    const RunResult r = run_cli({"info", "--model", checkpoints + "/gpt2_tiny"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Hugging Face GPT2LMHeadModel") != std::string::npos);
    CHECK(r.out.find("layers L = 2, heads H = 2, width E = 16, head width Dh = 8, MLP width = 64") !=
          std::string::npos);
    CHECK(r.out.find("\"activation_function\":\"gelu_new\"") != std::string::npos);
    // wte 277 x 16 + wpe 32 x 16 + 2 layers x 3472 + ln_f 32; lm_head.weight equals wte, counted once
    CHECK(r.out.find("parameters: 11536") != std::string::npos);
    CHECK(r.out.find("tied to wte (lm_head.weight equals it)") != std::string::npos);
    const RunResult bare = run_cli({"info", "--model", checkpoints + "/gpt2_tiny_f16"});
    REQUIRE(bare.exit_code == 0);
    CHECK(bare.out.find("Hugging Face GPT2Model") != std::string::npos);
    CHECK(bare.out.find("tied to wte") != std::string::npos);
}

TEST_CASE("gpt2: broken folders and bad input are one line, exit 2, no output") {
    TempDir dir;
    const std::string out = dir.file("o.safetensors");
    const std::vector<std::string> tokens = {"--tokens", "1,2,3"};
    const std::string b = checkpoints + "/bad/";
    check_bad_input(run_dump(b + "gpt2_missing_tensor", tokens, out), "has no tensor 'transformer.h.1.mlp.c_fc.bias'");
    check_bad_input(
        run_dump(b + "gpt2_wrong_shape", tokens, out),
        "'transformer.h.0.attn.c_attn.weight' has shape [48, 16], expected [16, 48] (config.json: n_embd = 16)");
    check_bad_input(run_dump(b + "gpt2_vocab_mismatch", tokens, out),
                    "'transformer.wte.weight' has shape [277, 16], expected [300, 16] (config.json: vocab_size = 300");
    check_bad_input(run_dump(b + "gpt2_lm_head_shape", tokens, out),
                    "'lm_head.weight' has shape [276, 16], expected [277, 16]");

    const std::string model = checkpoints + "/gpt2_tiny";
    check_bad_input(run_dump(model, {"--tokens", "1,277"}, out), "--tokens: id 277 at position 1 is outside 0..276");
    std::string long_text;
    for (int i = 0; i < 40; ++i) long_text += " x";   // 80 tokens: no merge joins "Ġ" and "x"
    check_bad_input(run_dump(model, {"--text", long_text}, out), "text: 80 tokens, more than");
    check_bad_input(run_dump(model, {"--text", long_text}, out), "limit of 32 (config.json: n_positions)");
    check_bad_input(run_dump(model, {"--image", source_dir + "/tests/images/rgb.png"}, out), "takes text, not images");

    // Without tokenizer files --tokens still works, --text is refused.
    const std::string bare = copy_folder(dir, checkpoints + "/gpt2_tiny");
    std::filesystem::remove(std::filesystem::path(bare) / "vocab.json");
    std::filesystem::remove(std::filesystem::path(bare) / "merges.txt");
    check_bad_input(run_dump(bare, {"--text", "the cat"}, out), "no tokenizer files");
    const RunResult r = run_dump(bare, tokens, dir.file("t.safetensors"));
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(out));
}
