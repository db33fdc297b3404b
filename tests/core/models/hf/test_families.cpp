// Every Hugging Face family in process: each committed tiny checkpoint (tests/checkpoints,
// written by tools/make_<family>_checkpoints.py in the real layout) is opened through the
// registry, given the golden case's input, and run; every layer's attention and the
// logits must equal the PyTorch reference's (tests/golden/<family>/) within the
// manifest's tolerance. One test over the families: a new family is a row of `families`.

#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;

struct Family {
    const char* golden;   // tests/golden/<golden>/cases.json and its tensors
    int n_cases;          // what the manifest holds: a case dropped by mistake fails here
};

constexpr Family families[] = {{"gpt2", 4}, {"bert", 6}, {"checkpoints", 12}, {"decoders", 26}, {"vision", 12}};

nlohmann::json manifest_of(const Family& family) {
    std::ifstream in(golden_dir() + "/" + family.golden + "/cases.json");
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/" << family.golden << "/cases.json");
    return nlohmann::json::parse(in);
}

// The case's input as the CLI's flags would give it: a picture, text, or token ids.
ModelInput input_of(const Model& model, const nlohmann::json& c) {
    if (c.contains("image")) {
        ImageOptions options;
        options.own_resolution = c.value("own_resolution", false);
        return model.encode_image(decode_image_file(source_dir + "/" + c.at("image").get<std::string>()), options);
    }
    if (c.contains("text")) return model.encode_text(c.at("text").get<std::string>());
    return model.encode_ids(c.at("ids").get<std::vector<std::int64_t>>());
}

// Head h's map of `attention` [H, T, T] (row-major floats).
Matrix head_of(const std::vector<float>& attention, Eigen::Index h, Eigen::Index T) {
    return Eigen::Map<const Matrix>(attention.data() + h * T * T, T, T);
}

void check_case(const nlohmann::json& c, const std::string& golden, double tolerance) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const auto model = open_model(source_dir + "/tests/checkpoints/" + c.at("checkpoint").get<std::string>(), {});
    const ModelInput input = input_of(*model, c);
    RunOptions options;
    options.causal = model->info().causal;
    const ModelTrace trace = model->forward(input, options);
    const SafetensorsFile expected = SafetensorsFile::open(golden_dir() + "/" + golden + "/" + name + ".safetensors");

    const auto L = c.at("layers").get<Eigen::Index>();
    const auto T = c.at("tokens").get<Eigen::Index>();
    REQUIRE(static_cast<Eigen::Index>(trace.layers.size()) == L);
    for (Eigen::Index l = 0; l < L; ++l) {
        const std::vector<float> attention = expected.get("attn." + std::to_string(l)).to_floats();
        const auto& heads = trace.layers[static_cast<std::size_t>(l)].heads;
        for (Eigen::Index h = 0; h < static_cast<Eigen::Index>(heads.size()); ++h) {
            CAPTURE(l);
            CAPTURE(h);
            const Matrix& ours = heads[static_cast<std::size_t>(h)].weights;
            REQUIRE(ours.rows() == T);
            CHECK(max_abs_diff(ours, head_of(attention, h, T)) <= tolerance);
        }
    }
    // The residual stream's norms before the final norm (what high-norm tokens are found by), where given.
    if (expected.contains("output_norms")) {
        const std::vector<float> norms = expected.get("output_norms").to_floats();
        REQUIRE(static_cast<std::size_t>(trace.output_norms.size()) == norms.size());
        for (std::size_t t = 0; t < norms.size(); ++t) {   // relative: norms run to tens
            CHECK(std::abs(trace.output_norms(static_cast<Eigen::Index>(t)) - norms[t]) <=
                  tolerance * std::max(1.0f, std::abs(norms[t])));
        }
    }
    if (!expected.contains("logits")) {
        CHECK(trace.logits.size() == 0);
        return;
    }
    const std::vector<float> logits = expected.get("logits").to_floats();
    REQUIRE(static_cast<std::size_t>(trace.logits.size()) == logits.size());
    CHECK(max_abs_diff(trace.logits.data(), logits.data(), logits.size()) <= tolerance);
}

}   // namespace

TEST_CASE("hf families in process: every layer's attention and the logits equal PyTorch's") {
    for (const Family& family : families) {
        CAPTURE(family.golden);
        const nlohmann::json manifest = manifest_of(family);
        const double tolerance = manifest.at("tolerance").get<double>();
        CHECK(tolerance <= 1e-4);
        int n_cases = 0;
        for (const auto& c : manifest.at("cases")) {
            check_case(c, family.golden, tolerance);
            ++n_cases;
        }
        CHECK(n_cases == family.n_cases);
    }
}
