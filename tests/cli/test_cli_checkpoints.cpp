// Hugging Face ViT and DeiT checkpoint folders through headscope-cli (the dump against
// PyTorch is test_cli_families.cpp's): own resolution, info, ablation and masking on a
// checkpoint, and broken checkpoints, each refused with one line.

#include "cli/cli_runner.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;
const std::string checkpoints = source_dir + "/tests/checkpoints";
const std::string rgb_png = source_dir + "/tests/images/rgb.png";

RunResult dump(const std::string& model, const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"dump", "--model", model, "--image", rgb_png, "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
}

}   // namespace

TEST_CASE("checkpoints: --own-resolution shrinks a large picture to at most --max-patches, keeping its aspect") {
    TempDir dir;
    // rgb.png is 64 x 48: 8 x 6 patches of 8 px. At most 10 patches: scale sqrt(10 / 48),
    // 29 x 21 px, cut to 24 x 16: a 3 x 2 grid, still wider than tall.
    const std::string out = dir.file("own.safetensors");
    const RunResult r = run_cli({"dump", "--model", checkpoints + "/vit_tiny", "--image", rgb_png, "--own-resolution",
                                 "--max-patches", "10", "--out", out});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto file = SafetensorsFile::open(out);
    CHECK(file.get("attn.0").shape == Shape{2, 7, 7});
    CHECK(tokens_of(file).back() == "p5");
    // The demo model's positions are built for its own grid: refused, one line.
    check_bad_input(run_cli({"dump", "--model", "builtin:toy-vit", "--image", rgb_png, "--own-resolution", "--out",
                             dir.file("toy.safetensors")}),
                    "runs at its own 224 px only");
}

TEST_CASE("checkpoints: info describes the architecture") {
    const RunResult vit = run_cli({"info", "--model", checkpoints + "/vit_tiny"});
    INFO("stderr: " << vit.err);
    REQUIRE(vit.exit_code == 0);
    CHECK(vit.out.find("Hugging Face ViTForImageClassification") != std::string::npos);
    CHECK(vit.out.find("image: 32 x 32 px, patches 8 x 8 px") != std::string::npos);
    CHECK(vit.out.find("layers L = 2, heads H = 2, width E = 16, head width Dh = 8, MLP width = 32") !=
          std::string::npos);
    // [CLS] 16 + positions 17 x 16 + patches 16 x 192 + 16 + 2 layers x 2224 + final norm 32 + classifier 5 x 17
    CHECK(vit.out.find("parameters: 7941") != std::string::npos);
    CHECK(vit.out.find("\"layer_norm_eps\":\"1e-06\"") != std::string::npos);

    const RunResult deit = run_cli({"info", "--model", checkpoints + "/deit_tiny_distilled_bf16"});
    INFO("stderr: " << deit.err);
    REQUIRE(deit.exit_code == 0);
    CHECK(deit.out.find("Hugging Face DeiTForImageClassificationWithTeacher") != std::string::npos);
    CHECK(deit.out.find("layers L = 2, heads H = 3, width E = 24") != std::string::npos);
    CHECK(deit.out.find("2 shards") != std::string::npos);
    CHECK(deit.out.find("\"resize\":\"off\"") != std::string::npos);

    const RunResult bare = run_cli({"info", "--model", checkpoints + "/vit_tiny_f16"});
    REQUIRE(bare.exit_code == 0);
    CHECK(bare.out.find("Hugging Face ViTModel") != std::string::npos);
    CHECK(bare.out.find("\"hidden_act\":\"gelu_new\"") != std::string::npos);
}

TEST_CASE("checkpoints: --disable-heads and --causal act on a checkpoint") {
    TempDir dir;
    const std::string model = checkpoints + "/deit_tiny_distilled";
    REQUIRE(dump(model, dir.file("p.safetensors")).exit_code == 0);
    REQUIRE(dump(model, dir.file("a.safetensors"), {"--disable-heads", "0.1"}).exit_code == 0);
    REQUIRE(dump(model, dir.file("c.safetensors"), {"--causal", "on"}).exit_code == 0);
    const auto plain = SafetensorsFile::open(dir.file("p.safetensors"));
    const auto ablated = SafetensorsFile::open(dir.file("a.safetensors"));
    const auto causal = SafetensorsFile::open(dir.file("c.safetensors"));
    CHECK(floats(ablated, "attn.0") == floats(plain, "attn.0"));
    CHECK(floats(ablated, "attn.1") != floats(plain, "attn.1"));
    CHECK(floats(ablated, "logits") != floats(plain, "logits"));
    const auto w = floats(causal, "attn.1");   // [3, 18, 18]
    for (int h = 0; h < 3; ++h) {
        for (int i = 0; i < 18; ++i) {
            for (int j = i + 1; j < 18; ++j) CHECK(w[static_cast<std::size_t>((h * 18 + i) * 18 + j)] == 0.0f);
        }
    }
    CHECK(causal.metadata().at("causal") == "on");
    check_bad_input(run_cli({"dump", "--model", model, "--text", "a cat", "--out", dir.file("t.safetensors")}),
                    "takes images, not text");
    check_bad_input(dump(model, dir.file("d.safetensors"), {"--disable-heads", "2.0"}), "2.0 does not exist");
}

TEST_CASE("checkpoints: broken folders are one line, exit 2, no output") {
    TempDir dir;
    const std::string out = dir.file("o.safetensors");
    const auto bad = [&](const std::string& folder, const std::string& needle) {
        CAPTURE(folder);
        check_bad_input(dump(folder, out), needle);
    };
    const std::string b = checkpoints + "/bad/";
    bad(b + "missing_tensor", "has no tensor 'vit.encoder.layer.1.attention.attention.key.bias'");
    bad(b + "wrong_shape",
        "'vit.encoder.layer.0.intermediate.dense.weight' has shape [16, 32], expected [32, 16] (config.json: "
        "hidden_size = 16, intermediate_size = 32)");
    bad(b + "config_mismatch",
        "'vit.embeddings.cls_token' has shape [1, 1, 16], expected [1, 1, 24] (config.json: hidden_size = 24)");
    bad(b + "labels_mismatch",
        "'classifier.weight' has shape [5, 16], expected [6, 16] (config.json: hidden_size = 16, 6 labels");
    bad(b + "unknown_tensor", "unexpected tensor 'vit.encoder.layer.0.attention.attention.query.weights'");
    bad(b + "truncated_shard", "model-00002-of-00002.safetensors");
    bad(b + "pickle_only", "only pytorch_model.bin (a pickle, which headscope does not load); convert it once");
    bad(b + "unsupported_type", "config.json: model_type 'swin' is not supported (supported: vit, deit");
    bad(b + "heads_not_dividing", "config.json: hidden_size = 16 is not divisible by num_attention_heads = 3");
    bad(b + "crop_disagrees",
        "preprocessor_config.json: images come out 24x24 px (size), but config.json's image_size is 32");

    std::filesystem::create_directory(dir.path() / "empty");
    bad(dir.file("empty"), "no config.json");
    bad(rgb_png, "not a checkpoint folder (a file");
    bad(dir.file("nowhere"), "not a built-in model");
    CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("checkpoints: hostile config, processor and index files are refused with the file and field") {
    TempDir dir;
    const std::string out = dir.file("o.safetensors");
    const auto broken = [&](const std::string& name, const std::string& checkpoint, const std::string& file,
                            const std::string& content, const std::string& needle) {
        CAPTURE(name);
        const std::string folder = copy_folder(dir, checkpoints + "/" + checkpoint);
        const std::filesystem::path renamed = dir.path() / name;
        std::filesystem::rename(folder, renamed);
        write_bytes((renamed / file).string(), content);
        check_bad_input(dump(renamed.string(), out), needle);
    };
    const auto edited = [&](const std::string& checkpoint, const std::string& file,
                            const std::function<void(nlohmann::json&)>& edit) {
        nlohmann::json j = nlohmann::json::parse(read_bytes(checkpoints + "/" + checkpoint + "/" + file));
        edit(j);
        return j.dump();
    };
    using J = nlohmann::json;
    broken("not_json", "vit_tiny", "config.json", "{\"model_type\": ", "config.json: not valid JSON");
    broken("deep", "vit_tiny", "config.json", std::string(200, '[') + std::string(200, ']'),
           "nests deeper than 16 levels");
    broken("string_size", "vit_tiny", "config.json",
           edited("vit_tiny", "config.json", [](J& j) { j["hidden_size"] = "16"; }),
           "config.json: field 'hidden_size': expected an integer in 1..65536, got \"16\"");
    broken("huge_size", "vit_tiny", "config.json",
           edited("vit_tiny", "config.json", [](J& j) { j["image_size"] = 1u << 31; }),
           "field 'image_size': expected an integer in 1..16384, got 2147483648");
    broken("activation", "vit_tiny", "config.json",
           edited("vit_tiny", "config.json", [](J& j) { j["hidden_act"] = "gelu_accurate"; }),
           "field 'hidden_act': 'gelu_accurate' is not supported");
    broken("labels_gap", "vit_tiny", "config.json",
           edited("vit_tiny", "config.json",
                  [](J& j) {
                      j["id2label"].erase("2");
                      j["id2label"]["7"] = "x";
                  }),
           "field 'id2label': key '7' is not a label id in 0..4");
    broken("architecture", "vit_tiny", "config.json",
           edited("vit_tiny", "config.json", [](J& j) { j["architectures"] = {"ViTForMaskedImageModeling"}; }),
           "'ViTForMaskedImageModeling' is not supported for model_type vit");
    broken("resample_box", "vit_tiny", "preprocessor_config.json",
           edited("vit_tiny", "preprocessor_config.json", [](J& j) { j["resample"] = 4; }),
           "field 'resample': PIL filter 4 (box) is not supported");
    broken("shortest_edge", "vit_tiny", "preprocessor_config.json",
           edited("vit_tiny", "preprocessor_config.json",
                  [](J& j) {
                      j["size"] = {{"shortest_edge", 32}};
                  }),
           "field 'size': needs height and width");
    broken("mlp_ratio", "dinov2_tiny", "config.json",
           edited("dinov2_tiny", "config.json", [](J& j) { j["mlp_ratio"] = 0; }),
           "field 'mlp_ratio': a positive number (the MLP is int(hidden_size * mlp_ratio) wide), got 0");
    broken("registers_mismatch", "dinov2_reg_tiny", "config.json",
           edited("dinov2_reg_tiny", "config.json", [](J& j) { j["num_register_tokens"] = 3; }),
           "embeddings.register_tokens");
    broken("edge_and_more", "dinov2_tiny", "preprocessor_config.json",
           edited("dinov2_tiny", "preprocessor_config.json",
                  [](J& j) {
                      j["size"] = {{"shortest_edge", 32}, {"longest_edge", 64}};
                  }),
           "field 'size': needs height and width, or shortest_edge alone, got keys {longest_edge, shortest_edge}");
    broken("zero_std", "vit_tiny", "preprocessor_config.json",
           edited("vit_tiny", "preprocessor_config.json",
                  [](J& j) {
                      j["image_std"] = {0.5, 0.0, 0.5};
                  }),
           "field 'image_std': channel 1 is 0");
    broken("escaping_shard", "deit_tiny_distilled_bf16", "model.safetensors.index.json",
           edited("deit_tiny_distilled_bf16", "model.safetensors.index.json",
                  [](J& j) { j["weight_map"]["deit.layernorm.bias"] = "../model-00002-of-00002.safetensors"; }),
           "is not a file name in this folder");
    broken("moved_tensor", "deit_tiny_distilled_bf16", "model.safetensors.index.json",
           edited("deit_tiny_distilled_bf16", "model.safetensors.index.json",
                  [](J& j) { j["weight_map"]["deit.layernorm.bias"] = "model-00001-of-00002.safetensors"; }),
           "model.safetensors.index.json puts it in model-00001-of-00002.safetensors");

    // No preprocessor_config.json: refused (it decides the pixels), naming the file.
    const std::string folder = copy_folder(dir, checkpoints + "/vit_tiny");
    std::filesystem::remove(std::filesystem::path(folder) / "preprocessor_config.json");
    check_bad_input(dump(folder, out), "preprocessor_config.json: missing");
    CHECK_FALSE(std::filesystem::exists(out));
}
