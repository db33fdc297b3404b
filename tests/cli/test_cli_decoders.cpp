// The decoder families through headscope-cli beyond dump's goldens (test_cli_families.cpp):
// export-weights gives back every stored tensor under its own name and layout (Phi-3's
// packed q/k/v and gate/up, GPT-NeoX's per-head q/k/v rows, Mistral's shards), info names
// the heads' groups and the local layers, and render and analyze take each family.

#include "cli/cli_runner.h"
#include "core/base/file_bytes.h"
#include "core/models/hf/weight_files.h"
#include "core/models/model_registry.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints";

}   // namespace

TEST_CASE("decoders: export-weights gives back every stored tensor, values and layout") {
    for (const char* name : {"pythia_tiny", "phi3_tiny", "mistral_tiny", "gemma2_tiny", "llama_tiny_linear"}) {
        CAPTURE(name);
        TempDir dir;
        const std::string out = dir.file("w.safetensors");
        const RunResult r = run_cli({"export-weights", "--model", checkpoints + "/" + name, "--out", out});
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        const SafetensorsFile exported = SafetensorsFile::open(out);
        const HfWeights stored = HfWeights::open(checkpoints + "/" + name);
        int compared = 0;
        for (const auto& [stored_name, entry] : stored.tensors()) {
            // The exported names drop the backbone's prefix; buffers (masks, inv_freq) are not weights.
            std::string held = stored_name;
            for (const std::string prefix : {"model.", "gpt_neox."}) {
                if (held.rfind(prefix, 0) == 0) held.erase(0, prefix.size());
            }
            if (!exported.contains(held)) {
                CHECK((held.find("attention.bias") != std::string::npos ||
                       held.find("masked_bias") != std::string::npos || held.find("inv_freq") != std::string::npos));
                continue;
            }
            CAPTURE(held);
            CHECK(exported.get(held).shape == entry.tensor->shape);
            CHECK(exported.get(held).to_floats() == entry.tensor->to_floats());
            ++compared;
        }
        CHECK(compared == static_cast<int>(exported.tensors().size()));
    }
}

TEST_CASE("decoders: info names the key/value groups, the local layers and the RoPE settings") {
    const RunResult r = run_cli({"info", "--model", checkpoints + "/gemma2_tiny"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string settings = r.out.substr(r.out.find("settings: ") + 10);
    const auto json = nlohmann::json::parse(settings.substr(0, settings.find('\n')));
    CHECK(json.at("heads") == "4 query, 2 key/value (2 per group)");
    CHECK(json.at("layers") == "global (layers 1, 3); local W=4 (layers 0, 2)");
    CHECK(json.at("score_cap") == "2");
    CHECK(json.at("logit_cap") == "4");
    CHECK(json.at("rope") == "default, base 10000");
    const RunResult phi = run_cli({"info", "--model", checkpoints + "/phi3_tiny"});
    REQUIRE(phi.exit_code == 0);
    CHECK(phi.out.find("longrope, base 10000, original 8 positions") != std::string::npos);
}

TEST_CASE("decoders: render and analyze take every family") {
    for (const char* name : {"llama_tiny", "mistral_tiny", "qwen2_tiny", "qwen3_tiny", "gemma_tiny", "gemma2_tiny",
                             "gemma3_tiny", "phi3_tiny", "pythia_tiny"}) {
        CAPTURE(name);
        TempDir dir;
        const std::vector<std::string> input = {"--text", "the cat sat on the mat"};
        std::vector<std::string> render = {"render", "--model", checkpoints + "/" + name, "--layer", "1", "--head",
                                           "3",      "--out",   dir.file("m.png")};
        render.insert(render.end(), input.begin(), input.end());
        const RunResult a = run_cli(render);
        INFO("stderr: " << a.err);
        CHECK(a.exit_code == 0);
        std::vector<std::string> analyze = {"analyze", "--model", checkpoints + "/" + name, "--out",
                                            dir.file("a.json")};
        analyze.insert(analyze.end(), input.begin(), input.end());
        const RunResult b = run_cli(analyze);
        INFO("stderr: " << b.err);
        REQUIRE(b.exit_code == 0);
        const auto report = nlohmann::json::parse(read_file_bytes(dir.file("a.json"), 1 << 20, "the report"));
        CHECK(report.at("heads_per_layer") == 4);
    }
}

TEST_CASE("decoders: dump writes a language model's logits a piece of rows at a time, the whole run's numbers") {
    // 200 positions: two pieces of the 128 rows dump computes at a time from the final
    // hidden state, which must be the logits a run keeping every row holds, bit for bit.
    const std::string folder = checkpoints + "/llama_tiny";
    std::vector<std::int64_t> ids;
    std::string list;
    for (int i = 0; i < 200; ++i) {
        ids.push_back(3 + (i * 37) % 290);
        if (i > 0) list += ',';
        list += std::to_string(ids.back());
    }
    TempDir dir;
    const std::string out = dir.file("long.safetensors");
    const RunResult r = run_cli({"dump", "--model", folder, "--tokens", list, "--only-layers", "0", "--out", out});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const auto model = open_model(folder, ToyConfig{});
    const ModelTrace whole = model->forward(model->encode_ids(ids), RunOptions{});
    const auto file = SafetensorsFile::open(out);
    REQUIRE(file.get("logits").shape == Shape{200, whole.logits.cols()});
    const std::vector<float> written = file.get("logits").to_floats();
    CHECK(std::equal(written.begin(), written.end(), whole.logits.data()));
}
