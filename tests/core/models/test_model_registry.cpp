// The registry's table of Hugging Face families: every model_type of every row opens
// that family on a committed tiny checkpoint (tests/checkpoints), a model_type no row has
// is refused in one line that lists every row's, and docs/cli.md names every row's.

#include "core/base/error.h"
#include "core/models/model_registry.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

using namespace headscope;
using namespace headscope::test;

namespace {

std::string checkpoints_dir() { return std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints"; }

// A committed tiny checkpoint of each model_type (the folders tools/make_*_checkpoints.py write).
std::string tiny_checkpoint(std::string_view model_type) {
    if (model_type == "vit") return checkpoints_dir() + "/vit_tiny";
    if (model_type == "deit") return checkpoints_dir() + "/deit_tiny_distilled";
    if (model_type == "dinov2") return checkpoints_dir() + "/dinov2_tiny";
    if (model_type == "dinov2_with_registers") return checkpoints_dir() + "/dinov2_reg_tiny";
    if (model_type == "clip") return checkpoints_dir() + "/clip_tiny";
    if (model_type == "gpt2") return checkpoints_dir() + "/gpt2_tiny";
    if (model_type == "bert") return checkpoints_dir() + "/bert_tiny";
    if (model_type == "llama") return checkpoints_dir() + "/llama_tiny";
    if (model_type == "mistral") return checkpoints_dir() + "/mistral_tiny";
    if (model_type == "qwen2") return checkpoints_dir() + "/qwen2_tiny";
    if (model_type == "qwen3") return checkpoints_dir() + "/qwen3_tiny";
    if (model_type == "gemma") return checkpoints_dir() + "/gemma_tiny";
    if (model_type == "gemma2") return checkpoints_dir() + "/gemma2_tiny";
    if (model_type == "gemma3_text") return checkpoints_dir() + "/gemma3_tiny";
    if (model_type == "phi3") return checkpoints_dir() + "/phi3_tiny";
    if (model_type == "gpt_neox") return checkpoints_dir() + "/pythia_tiny";
    if (model_type == "siglip") return checkpoints_dir() + "/siglip_tiny";
    if (model_type == "t5") return checkpoints_dir() + "/t5_tiny";
    if (model_type == "bart") return checkpoints_dir() + "/bart_tiny";
    return "";
}

std::string error_of(const std::string& path) {
    try {
        open_model(path, ToyConfig{});
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("registry: each row's model_types open that row's family") {
    REQUIRE_FALSE(hf_families().empty());
    std::set<std::string_view> seen;
    for (const HfFamily& family : hf_families()) {
        CHECK_FALSE(family.description.empty());
        REQUIRE(static_cast<bool>(family.load));
        for (const std::string_view type : family.model_types) {
            CAPTURE(type);
            CHECK(seen.insert(type).second);   // no model_type in two rows
            const std::string folder = tiny_checkpoint(type);
            REQUIRE_MESSAGE(!folder.empty(), "a new row needs a tiny checkpoint here");
            const auto model = open_model(folder, ToyConfig{});
            CHECK(model->info().settings.at("model_type") == type);
            // The row's own loader opens it the same way.
            CHECK(family.load(folder, {})->info().description == model->info().description);
        }
    }
}

TEST_CASE("registry: hf_supported_model_types is every row's, in table order") {
    std::vector<std::string> expected;
    for (const HfFamily& family : hf_families())
        expected.insert(expected.end(), family.model_types.begin(), family.model_types.end());
    CHECK(hf_supported_model_types() == expected);
}

TEST_CASE("registry: an unknown model_type is one line listing every supported one") {
    std::string supported;
    for (const std::string& type : hf_supported_model_types()) supported += (supported.empty() ? "" : ", ") + type;
    TempDir dir;
    write_bytes(dir.file("config.json"), R"({"model_type": "swin"})");
    const std::string message = error_of(dir.path().string());
    CHECK(message == dir.file("config.json") + ": model_type 'swin' is not supported (supported: " + supported + ")");
    CHECK(message.find('\n') == std::string::npos);

    write_bytes(dir.file("config.json"), R"({"hidden_size": 8})");
    CHECK(error_of(dir.path().string()) ==
          dir.file("config.json") + ": field 'model_type': is missing (supported: " + supported + ")");
}

TEST_CASE("registry: docs/cli.md names every row's model_types") {
    std::ifstream in(std::string(HEADSCOPE_SOURCE_DIR) + "/docs/cli.md");
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    for (const std::string& type : hf_supported_model_types()) {
        CAPTURE(type);
        CHECK(text.str().find("`" + type + "`") != std::string::npos);
    }
}
