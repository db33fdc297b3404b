// CLIP in process: each committed tiny CLIP checkpoint (tests/checkpoints/clip_*, written by
// tools/make_clip_checkpoints.py in the real layout) is opened through the registry, given the
// golden case's picture and labels (token ids), and run; the image tower's maps, each label's
// text-tower maps and logits_per_image must equal the PyTorch reference's (tests/golden/clip/,
// written from transformers' modeling_clip.py) within the manifest's tolerance.

#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;

// Every head of every layer of `layers` against `prefix`L [H, T, T] of `expected`.
void check_maps(const LayerTraces& layers, const SafetensorsFile& expected, const std::string& prefix, Eigen::Index L,
                Eigen::Index H, Eigen::Index T, double tolerance) {
    REQUIRE(static_cast<Eigen::Index>(layers.size()) == L);
    for (Eigen::Index l = 0; l < L; ++l) {
        const std::vector<float> maps = expected.get(prefix + std::to_string(l)).to_floats();
        REQUIRE(static_cast<Eigen::Index>(maps.size()) == H * T * T);
        const auto& heads = layers[static_cast<std::size_t>(l)].heads;
        REQUIRE(static_cast<Eigen::Index>(heads.size()) == H);
        for (Eigen::Index h = 0; h < H; ++h) {
            CAPTURE(prefix);
            CAPTURE(l);
            CAPTURE(h);
            const Matrix& ours = heads[static_cast<std::size_t>(h)].weights;
            REQUIRE(ours.rows() == T);
            CHECK(max_abs_diff(ours, Eigen::Map<const Matrix>(maps.data() + h * T * T, T, T)) <= tolerance);
        }
    }
}

void check_case(const nlohmann::json& c, double tolerance) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const auto model = open_model(source_dir + "/tests/checkpoints/" + c.at("checkpoint").get<std::string>(), {});
    REQUIRE(model->info().zero_shot);
    ImageOptions options;
    options.own_resolution = c.at("own_resolution").get<bool>();
    ModelInput input =
        model->encode_image(decode_image_file(source_dir + "/" + c.at("image").get<std::string>()), options);
    const auto label_ids = c.at("label_ids").get<std::vector<std::vector<std::int64_t>>>();
    for (const auto& ids : label_ids) input.prompts.push_back(model->encode_label_ids(ids));
    const ModelTrace trace = model->forward(input, RunOptions{});
    const SafetensorsFile expected = SafetensorsFile::open(golden_dir() + "/clip/" + name + ".safetensors");

    check_maps(trace.layers, expected, "vision.attn.", c.at("vision_layers"), c.at("vision_heads"),
               c.at("vision_tokens"), tolerance);
    REQUIRE(trace.prompt_traces.size() == label_ids.size());
    for (std::size_t i = 0; i < label_ids.size(); ++i) {
        check_maps(trace.prompt_traces[i].layers, expected, "text." + std::to_string(i) + ".attn.", c.at("text_layers"),
                   c.at("text_heads"), static_cast<Eigen::Index>(label_ids[i].size()), tolerance);
    }
    const std::vector<float> logits = expected.get("logits_per_image").to_floats();
    REQUIRE(trace.logits.rows() == 1);
    REQUIRE(static_cast<std::size_t>(trace.logits.cols()) == logits.size());
    CHECK(max_abs_diff(trace.logits.data(), logits.data(), logits.size()) <= tolerance);
}

}   // namespace

TEST_CASE("clip in process: the image tower's maps, each label's maps and logits_per_image equal PyTorch's") {
    std::ifstream in(golden_dir() + "/clip/cases.json");
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/clip/cases.json (run tools/make_clip_checkpoints.py)");
    const nlohmann::json manifest = nlohmann::json::parse(in);
    const double tolerance = manifest.at("tolerance").get<double>();
    CHECK(tolerance <= 1e-4);
    int n_cases = 0;
    for (const auto& c : manifest.at("cases")) {
        check_case(c, tolerance);
        ++n_cases;
    }
    CHECK(n_cases == 4);   // a case dropped by mistake fails here
}

TEST_CASE("clip: a label without the end-of-text token is refused, naming the field") {
    const auto model = open_model(source_dir + "/tests/checkpoints/clip_tiny_gelu_bf16", {});
    const std::vector<std::int64_t> ids = {510, 17, 42};
    CHECK_THROWS_WITH_AS(model->encode_label_ids(ids), doctest::Contains("text_config.eos_token_id"), Error);
    // Models that score no labels say so.
    const auto gpt2 = open_model(source_dir + "/tests/checkpoints/gpt2_tiny", {});
    CHECK_THROWS_WITH_AS(gpt2->encode_label_ids(ids), doctest::Contains("scores no labels"), Error);
}
