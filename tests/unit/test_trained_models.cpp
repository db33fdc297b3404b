// The demo model trained by tools/train_vision.py (assets/models/) learned what its
// README claims, measured here with the app's own loader on scenes it never trained on.

#include "core/error.h"
#include "core/image.h"
#include "core/model_registry.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>

using namespace headscope;

TEST_CASE("trained models: listed, and opened under the built-in name") {
    std::vector<std::string> names;
    for (const BuiltinModel& m : builtin_models()) names.push_back(m.name);
    CHECK(std::find(names.begin(), names.end(), "builtin:tiny-shapes") != names.end());
    const auto shapes = open_model("builtin:tiny-shapes", ToyConfig{});
    CHECK(shapes->info().name == "builtin:tiny-shapes");
    CHECK(shapes->info().takes_image);
    CHECK(shapes->info().classifier);
    CHECK(shapes->info().image_size == 64);
    CHECK(shapes->info().patch_size == 8);
    // Trained, not built: no ToyConfig shapes it (the window hides the toy settings).
    CHECK_FALSE(is_toy_model("builtin:tiny-shapes"));
    CHECK(is_toy_model("builtin:toy-text"));
    CHECK(is_toy_model("builtin:toy-vit"));
    CHECK_FALSE(is_toy_model("path/to/folder"));
}

TEST_CASE("trained models: a missing assets folder is one clear line naming the file and the script") {
    const test::TempDir empty;
    const char* before = std::getenv("HEADSCOPE_ASSETS");
    const std::string saved = before ? before : "";
    ::setenv("HEADSCOPE_ASSETS", empty.path().c_str(), 1);
    std::string message;
    try {
        open_model("builtin:tiny-shapes", ToyConfig{});
    } catch (const Error& e) {
        message = e.what();
    }
    if (before) ::setenv("HEADSCOPE_ASSETS", saved.c_str(), 1); else ::unsetenv("HEADSCOPE_ASSETS");
    CHECK(message == "builtin:tiny-shapes: " + (empty.path() / "models" / "tiny-shapes" / "config.json").string() +
                         " is missing (set HEADSCOPE_ASSETS to the assets folder, or retrain: /usr/bin/python3 "
                         "tools/train_vision.py)");
}

TEST_CASE("trained models: tiny-shapes names held-out scenes (> 90%) and its [CLS] finds the shape (> 50%)") {
    const auto model = open_model("builtin:tiny-shapes", ToyConfig{});
    const std::string dir = HEADSCOPE_IMAGES_DIR "/tiny-shapes";
    std::ifstream in(dir + "/scenes.json");
    REQUIRE(in);
    const nlohmann::json scenes = nlohmann::json::parse(in);
    const auto& list = scenes.at("scenes");
    REQUIRE(list.size() >= 90);
    const auto L = static_cast<std::size_t>(model->info().n_layers);
    const auto H = static_cast<std::size_t>(model->info().n_heads);
    int correct = 0;
    std::vector<double> cls_on_shape(H, 0.0);
    for (const auto& scene : list) {
        const ModelInput input = model->encode_image(decode_image_file(dir + "/" + scene.at("file").get<std::string>()));
        REQUIRE(input.n_prefix_tokens == 1);
        const ModelTrace trace = model->forward(input, RunOptions{});
        Eigen::Index predicted = 0;
        trace.logits.row(0).maxCoeff(&predicted);
        correct += model->output_label(predicted) == scene.at("label").get<std::string>();
        for (std::size_t h = 0; h < H; ++h) {
            const Matrix& w = trace.layers[L - 1].heads[h].weights;
            for (int patch : scene.at("shape_patches")) cls_on_shape[h] += w(0, 1 + patch);
        }
    }
    const double accuracy = static_cast<double>(correct) / static_cast<double>(list.size());
    CAPTURE(correct);
    CHECK(accuracy > 0.9);
    const double best = *std::max_element(cls_on_shape.begin(), cls_on_shape.end()) / static_cast<double>(list.size());
    CHECK(best > 0.5);
}
