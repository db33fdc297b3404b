// CLIP and SigLIP in process: each committed tiny checkpoint (tests/checkpoints/clip_* and
// siglip_*, written by tools/make_clip_checkpoints.py and make_siglip_checkpoints.py in the real
// layouts) is opened through the registry, given the golden case's picture and labels (token
// ids), and run; the image tower's maps, SigLIP's pooling probe's maps, each label's text-tower
// maps, logits_per_image and the probabilities must equal the PyTorch reference's
// (tests/golden/clip/ and siglip/, written from transformers' modeling_clip.py and
// modeling_siglip.py) within the manifest's tolerance.

#include "core/analysis/top_predictions.h"
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

// The probabilities: softmax over the labels or each label's sigmoid, as the manifest says;
// relative to each, for SigLIP's (-10 bias: far below the absolute tolerance).
void check_probabilities(const ModelInfo& info, const nlohmann::json& c, const ModelTrace& trace,
                         const SafetensorsFile& expected) {
    const bool sigmoid = c.value("probability", "softmax") == "sigmoid";
    CHECK((info.label_score == LabelScore::sigmoid) == sigmoid);
    const std::vector<float> probs = expected.get("probs").to_floats();
    std::vector<Eigen::Index> all(probs.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<Eigen::Index>(i);
    const std::vector<float> ours = probabilities_at(logits_row(trace.logits, 0), all, info.label_score);
    for (std::size_t i = 0; i < probs.size(); ++i) {
        CAPTURE(i);
        CHECK(std::abs(ours[i] - probs[i]) <= 1e-3 * std::abs(probs[i]) + 1e-7);
    }
}

void check_case(const std::string& family, const nlohmann::json& c, double tolerance) {
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
    const SafetensorsFile expected = SafetensorsFile::open(golden_dir() + "/" + family + "/" + name + ".safetensors");

    check_maps(trace.layers, expected, "vision.attn.", c.at("vision_layers"), c.at("vision_heads"),
               c.at("vision_tokens"), tolerance);
    const Eigen::Index T = c.at("vision_tokens");
    if (expected.contains("vision.pool.attn")) {   // SigLIP's probe: [H, 1, T] against ours [H, T]
        const std::vector<float> probe = expected.get("vision.pool.attn").to_floats();
        REQUIRE(model->info().probe_heads == c.at("vision_heads").get<Eigen::Index>());
        REQUIRE(trace.probe_maps.size() == static_cast<Eigen::Index>(probe.size()));
        CHECK(max_abs_diff(trace.probe_maps, Eigen::Map<const Matrix>(probe.data(), trace.probe_maps.rows(), T)) <=
              tolerance);
        CHECK(trace.probe_maps.rowwise().sum().isApproxToConstant(1.0f, 1e-5f));
    } else {
        CHECK(model->info().probe_heads == 0);
    }
    REQUIRE(trace.prompt_traces.size() == label_ids.size());
    for (std::size_t i = 0; i < label_ids.size(); ++i) {
        check_maps(trace.prompt_traces[i].layers, expected, "text." + std::to_string(i) + ".attn.", c.at("text_layers"),
                   c.at("text_heads"), static_cast<Eigen::Index>(label_ids[i].size()), tolerance);
    }
    const std::vector<float> logits = expected.get("logits_per_image").to_floats();
    REQUIRE(trace.logits.rows() == 1);
    REQUIRE(static_cast<std::size_t>(trace.logits.cols()) == logits.size());
    CHECK(max_abs_diff(trace.logits.data(), logits.data(), logits.size()) <= tolerance);
    check_probabilities(model->info(), c, trace, expected);
}

// Every case of tests/golden/<family>/cases.json; returns how many.
int check_family(const std::string& family) {
    std::ifstream in(golden_dir() + "/" + family + "/cases.json");
    std::string missing = "missing tests/golden/";
    missing += family + "/cases.json (run tools/make_" + family + "_checkpoints.py)";
    REQUIRE_MESSAGE(in.good(), missing);
    const nlohmann::json manifest = nlohmann::json::parse(in);
    const double tolerance = manifest.at("tolerance").get<double>();
    CHECK(tolerance <= 1e-4);
    int n_cases = 0;
    for (const auto& c : manifest.at("cases")) {
        check_case(family, c, tolerance);
        ++n_cases;
    }
    return n_cases;
}

}   // namespace

TEST_CASE("clip in process: the image tower's maps, each label's maps and logits_per_image equal PyTorch's") {
    CHECK(check_family("clip") == 4);   // a case dropped by mistake fails here
}

TEST_CASE("siglip in process: the image tower's maps, the probe's, each label's maps and the sigmoid logits equal "
          "PyTorch's") {
    CHECK(check_family("siglip") == 4);
}

TEST_CASE("clip: a label without the end-of-text token is refused, naming the field") {
    const auto model = open_model(source_dir + "/tests/checkpoints/clip_tiny_gelu_bf16", {});
    const std::vector<std::int64_t> ids = {510, 17, 42};
    CHECK_THROWS_WITH_AS(model->encode_label_ids(ids), doctest::Contains("text_config.eos_token_id"), Error);
    // Models that score no labels say so.
    const auto gpt2 = open_model(source_dir + "/tests/checkpoints/gpt2_tiny", {});
    CHECK_THROWS_WITH_AS(gpt2->encode_label_ids(ids), doctest::Contains("scores no labels"), Error);
}
