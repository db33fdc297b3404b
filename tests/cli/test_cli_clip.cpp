// CLIP through headscope-cli: `dump --image --label-tokens` of each golden case of the
// committed tiny CLIP checkpoints (tools/make_clip_checkpoints.py writes both) against
// PyTorch (the image tower's maps, each label's maps and ids, logits_per_image), the names
// docs/cli.md promises; the same labels typed with --labels through CLIP's real tokenizer
// (tools/fetch-tokenizers.sh) give the same file; a head switched off moves the scores.
// SigLIP's dumps likewise (tools/make_siglip_checkpoints.py), its pooling probe's maps too.

#include "cli/cli_runner.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;
const std::string checkpoints = source_dir + "/tests/checkpoints";

nlohmann::json manifest(const std::string& family = "clip") {
    std::ifstream in(golden_dir() + "/" + family + "/cases.json");
    std::string missing = "missing tests/golden/";
    missing += family + "/cases.json (run tools/make_" + family + "_checkpoints.py)";
    REQUIRE_MESSAGE(in.good(), missing);
    return nlohmann::json::parse(in);
}

// "1,2,3;4,5": the case's labels as --label-tokens takes them.
std::string label_tokens(const nlohmann::json& c) {
    std::string list;
    for (const auto& ids : c.at("label_ids")) {
        if (!list.empty()) list += ';';
        std::string label;
        for (const auto& id : ids) {
            if (!label.empty()) label += ',';
            label += std::to_string(id.get<int>());
        }
        list += label;
    }
    return list;
}

SafetensorsFile dump(const std::string& model, const nlohmann::json& c, const std::vector<std::string>& labels,
                     const std::string& out, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "dump", "--model", model, "--image", source_dir + "/" + c.at("image").get<std::string>(), "--out", out};
    args.insert(args.end(), labels.begin(), labels.end());
    args.insert(args.end(), extra.begin(), extra.end());
    if (c.at("own_resolution").get<bool>()) args.push_back("--own-resolution");
    const RunResult r = run_cli(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    return SafetensorsFile::open(out);
}

void check_same(const SafetensorsFile& ours, const SafetensorsFile& expected, const std::string& name,
                double tolerance) {
    CAPTURE(name);
    REQUIRE(ours.contains(name));
    CHECK(ours.get(name).shape == expected.get(name).shape);
    const std::vector<float> a = ours.get(name).to_floats();
    const std::vector<float> b = expected.get(name).to_floats();
    REQUIRE(a.size() == b.size());
    CHECK(max_abs_diff(a.data(), b.data(), a.size()) <= tolerance);
}

// The dump of case `c` against its golden file: every map, each label's ids, the scores.
void check_case(const SafetensorsFile& ours, const nlohmann::json& c, double tolerance,
                const std::string& family = "clip") {
    const SafetensorsFile expected =
        SafetensorsFile::open(golden_dir() + "/" + family + "/" + c.at("name").get<std::string>() + ".safetensors");
    CHECK(ours.contains("vision.pool.attn") == (family == "siglip"));   // SigLIP's probe, [H, 1, N]
    if (family == "siglip") check_same(ours, expected, "vision.pool.attn", tolerance);
    for (int l = 0; l < c.at("vision_layers").get<int>(); ++l) {
        check_same(ours, expected, "vision.attn." + std::to_string(l), tolerance);
    }
    CHECK_FALSE(ours.contains("attn.0"));   // the image tower's maps are named as such
    const auto label_ids = c.at("label_ids").get<std::vector<std::vector<std::int64_t>>>();
    for (std::size_t i = 0; i < label_ids.size(); ++i) {
        const std::string at = "text." + std::to_string(i) + ".";
        for (int l = 0; l < c.at("text_layers").get<int>(); ++l) {
            check_same(ours, expected, at + "attn." + std::to_string(l), tolerance);
        }
        CHECK(int64s(ours, at + "input_ids") == label_ids[i]);
    }
    check_same(ours, expected, "logits_per_image", tolerance);
    const auto names = nlohmann::json::parse(ours.metadata().at("labels"));
    CHECK(names.size() == label_ids.size());
}

// Every golden case of `family` dumped with --label-tokens and checked; returns how many.
int check_family_dumps(const std::string& family) {
    const nlohmann::json m = manifest(family);
    int n_cases = 0;
    for (const auto& c : m.at("cases")) {
        CAPTURE(c.at("name").get<std::string>());
        TempDir dir;
        const SafetensorsFile ours = dump(checkpoints + "/" + c.at("checkpoint").get<std::string>(), c,
                                          {"--label-tokens", label_tokens(c)}, dir.file("out.safetensors"));
        check_case(ours, c, m.at("tolerance").get<double>(), family);
        ++n_cases;
    }
    return n_cases;
}

}   // namespace

TEST_CASE("clip: dump --label-tokens gives the image tower's maps, each label's and the scores of PyTorch") {
    CHECK(check_family_dumps("clip") == 4);   // a case dropped by mistake fails here
}

TEST_CASE("siglip: dump --label-tokens gives the image tower's maps, the probe's, each label's and the sigmoid's "
          "logits of PyTorch") {
    CHECK(check_family_dumps("siglip") == 4);
}

TEST_CASE("clip: labels typed through CLIP's real tokenizer give the golden ids, and a head switched off moves them") {
    const std::string tokenizer = std::string(HEADSCOPE_TOKENIZERS_DIR) + "/models/clip";
    if (!std::filesystem::exists(tokenizer + "/tokenizer.json")) {
        FAIL("CLIP's tokenizer is not in " << tokenizer << ": run tools/fetch-tokenizers.sh");
    }
    // The committed checkpoint keeps CLIP's whole vocabulary; the tokenizer files join it here.
    TempDir dir;
    const std::string model = dir.file("clip");
    std::filesystem::copy(checkpoints + "/clip_tiny", model);
    for (const auto& file : std::filesystem::directory_iterator(tokenizer)) {
        std::filesystem::copy_file(file.path(), model + "/" + file.path().filename().string());
    }
    const nlohmann::json m = manifest();
    const nlohmann::json& c = m.at("cases").at(0);
    REQUIRE(c.at("name") == "clip_tiny.rgb");
    std::string typed;
    for (const auto& text : c.at("label_texts")) {
        if (!typed.empty()) typed += ',';
        typed += text.get<std::string>();
    }
    const SafetensorsFile ours = dump(model, c, {"--labels", typed}, dir.file("typed.safetensors"));
    check_case(ours, c, m.at("tolerance").get<double>());
    const auto tokens = nlohmann::json::parse(ours.metadata().at("label_tokens"));
    CHECK(tokens.at(0) == nlohmann::json({"<|startoftext|>", "a ", "photo ", "of ", "a ", "cat ", "<|endoftext|>"}));

    // Switching an image-tower head off changes the image's embedding, so every score.
    const SafetensorsFile ablated =
        dump(model, c, {"--labels", typed}, dir.file("ablated.safetensors"), {"--disable-heads", "1.0,1.1"});
    const std::vector<float> before = ours.get("logits_per_image").to_floats();
    const std::vector<float> after = ablated.get("logits_per_image").to_floats();
    REQUIRE(before.size() == after.size());
    CHECK(max_abs_diff(before.data(), after.data(), before.size()) > 1e-3);
    // The labels' own maps do not change: the text tower runs with every head on.
    check_same(ablated, ours, "text.0.attn.1", 0.0);
}

TEST_CASE("clip: --tower text dumps the text tower alone, a label's maps as a text model's") {
    const nlohmann::json m = manifest();
    const nlohmann::json& c = m.at("cases").at(0);
    const SafetensorsFile expected =
        SafetensorsFile::open(golden_dir() + "/clip/" + c.at("name").get<std::string>() + ".safetensors");
    const auto ids = c.at("label_ids").at(0).get<std::vector<std::int64_t>>();
    std::string tokens;
    for (const std::int64_t id : ids) {
        if (!tokens.empty()) tokens += ',';
        tokens += std::to_string(id);
    }
    TempDir dir;
    const RunResult r = run_cli({"dump", "--model", checkpoints + "/" + c.at("checkpoint").get<std::string>(),
                                 "--tower", "text", "--tokens", tokens, "--out", dir.file("text.safetensors")});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const SafetensorsFile ours = SafetensorsFile::open(dir.file("text.safetensors"));
    for (int l = 0; l < c.at("text_layers").get<int>(); ++l) {
        const std::vector<float> a = ours.get("attn." + std::to_string(l)).to_floats();
        const std::vector<float> b = expected.get("text.0.attn." + std::to_string(l)).to_floats();
        REQUIRE(a.size() == b.size());
        CHECK(max_abs_diff(a.data(), b.data(), a.size()) <= m.at("tolerance").get<double>());
    }
    CHECK(int64s(ours, "input_ids") == ids);
    CHECK(ours.metadata().at("causal") == "on");
    // A model without one says so.
    const RunResult vit = run_cli({"dump", "--model", checkpoints + "/vit_tiny", "--tower", "text", "--tokens", "1,2",
                                   "--out", dir.file("vit.safetensors")});
    CHECK(vit.exit_code == 2);
    CHECK(vit.err.find("has no text tower") != std::string::npos);
}

TEST_CASE("siglip: labels typed through the folder's spiece.model dump as SiglipTokenizer's ids would") {
    std::ifstream in(golden_dir() + "/siglip/tokenizer.json");
    REQUIRE(in.good());
    const nlohmann::json golden = nlohmann::json::parse(in);
    const nlohmann::json m = manifest("siglip");
    const nlohmann::json& c = m.at("cases").at(0);
    REQUIRE(c.at("checkpoint") == "siglip_tiny");
    // The golden's first two labels, typed; and their ids (64 each, padding included) as given.
    const nlohmann::json& a = golden.at("cases").at(0);
    const nlohmann::json& b = golden.at("cases").at(1);
    nlohmann::json as_ids = c;
    as_ids["label_ids"] = nlohmann::json::array({a.at("ids"), b.at("ids")});
    TempDir dir;
    const std::string model = checkpoints + "/siglip_tiny";
    const SafetensorsFile typed =
        dump(model, c, {"--labels", a.at("text").get<std::string>() + "," + b.at("text").get<std::string>()},
             dir.file("typed.safetensors"));
    const SafetensorsFile given = dump(model, c, {"--label-tokens", label_tokens(as_ids)}, dir.file("ids.safetensors"));
    for (int i = 0; i < 2; ++i) {
        const std::string at = "text." + std::to_string(i) + ".";
        CHECK(int64s(typed, at + "input_ids") == int64s(given, at + "input_ids"));
        check_same(typed, given, at + "attn.1", 0.0);
    }
    check_same(typed, given, "logits_per_image", 0.0);
    const auto tokens = nlohmann::json::parse(typed.metadata().at("label_tokens"));
    CHECK(tokens.at(0).size() == 64);
    CHECK(tokens.at(0).at(1) == " photo");

    // `tokenize` reads the same folder as tokenizer(text) does: </s>, no padding.
    const RunResult r = run_cli({"tokenize", "--model", model, "--text", a.at("text").get<std::string>()});
    REQUIRE(r.exit_code == 0);
    const auto out = nlohmann::json::parse(r.out);
    const std::size_t n = a.at("pieces").size() + 1;
    const auto ids = a.at("ids").get<std::vector<int>>();
    CHECK(out.at("ids").get<std::vector<int>>() == std::vector<int>(ids.begin(), ids.begin() + static_cast<long>(n)));
    CHECK(out.at("tokens").at(1) == "\u2581photo");
}
