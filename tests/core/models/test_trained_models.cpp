// The demo models trained by tools/train_text.py and tools/train_vision.py
// (assets/models/) learned what their README claims, measured here with the app's own
// loader and metrics on inputs they never trained on.

#include "core/analysis/head_metrics.h"
#include "core/base/error.h"
#include "core/base/seeded_random.h"
#include "core/image/image.h"
#include "core/models/model_registry.h"
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
    CHECK(std::find(names.begin(), names.end(), "builtin:tiny-story") != names.end());
    const auto story = open_model("builtin:tiny-story", ToyConfig{});
    CHECK(story->info().name == "builtin:tiny-story");
    CHECK(story->info().takes_text);
    CHECK(story->info().causal);
    CHECK(story->info().max_tokens == 128);
    CHECK_FALSE(is_toy_model("builtin:tiny-story"));
    // One token per character: the byte-level tokenizer has no merges.
    CHECK(story->encode_text("In the beginning").ids.size() == 16);
    // Its errors name it as the user did, not the folder it was read from.
    CHECK_THROWS_WITH_AS(story->encode_text(std::string(200, 'a')),
                         "text: 200 tokens, more than builtin:tiny-story's limit of 128 (config.json: n_positions)",
                         Error);
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
    if (before)
        ::setenv("HEADSCOPE_ASSETS", saved.c_str(), 1);
    else
        ::unsetenv("HEADSCOPE_ASSETS");
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
        const ModelInput input =
            model->encode_image(decode_image_file(dir + "/" + scene.at("file").get<std::string>()));
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

namespace {

// Per head [L * H] metrics of one text, averaged over several texts.
std::vector<HeadMetrics> mean_metrics(const Model& model, const std::vector<std::string>& texts) {
    std::vector<HeadMetrics> mean;
    for (const std::string& text : texts) {
        const ModelInput input = model.encode_text(text);
        const std::vector<HeadMetrics> metrics =
            compute_model_metrics(model.forward(input, RunOptions{}), metric_context(input, model.info()));
        if (mean.empty()) mean.resize(metrics.size());
        for (std::size_t k = 0; k < metrics.size(); ++k) {
            mean[k].prev_token += metrics[k].prev_token / static_cast<double>(texts.size());
            mean[k].induction = mean[k].induction.value_or(0.0) +
                                metrics[k].induction.value_or(0.0) / static_cast<double>(texts.size());
        }
    }
    return mean;
}

}   // namespace

TEST_CASE("trained models: tiny-story has a previous-token head (> 0.8) on held-out text and an induction "
          "head (> 0.5) on random characters said twice") {
    const auto model = open_model("builtin:tiny-story", ToyConfig{});
    // Verses of Jude, held out of training (tools/train_text.py trains on Genesis .. 3 John).
    const std::vector<std::string> held_out = {
        "Keep yourselves in the love of God, looking for the mercy of our Lord Jesus Christ unto eternal life.",
        "And others save with fear, pulling them out of the fire; hating even the garment spotted by the flesh.",
        "To the only wise God our Saviour, be glory and majesty, dominion and power, both now and ever. Amen.",
        "But ye, beloved, building up yourselves on your most holy faith, praying in the Holy Ghost,",
    };
    double best_prev = 0.0;
    for (const HeadMetrics& m : mean_metrics(*model, held_out)) best_prev = std::max(best_prev, m.prev_token);
    CHECK(best_prev > 0.8);

    // 60 distinct characters in random order, said twice: only a head that looks up what
    // followed the earlier copy of the current character attends 59 back. Distinct, as in
    // TransformerLens' detector on a 50k-token vocabulary, where a token rarely repeats
    // within one half: with one token per character, 60 draws with replacement from 62
    // characters would repeat most of them within the first half, and the "latest earlier
    // occurrence" the score looks at would mostly not be the copy. The characters are the
    // 62 of the training text (no newline, no 'X'); seeded (core/base/seeded_random.h).
    const std::string alphabet = " !'(),-.:;?ABCDEFGHIJKLMNOPQRSTUVWYZabcdefghijklmnopqrstuvwxyz";
    REQUIRE(alphabet.size() == 62);
    std::vector<std::string> repeated;
    for (std::uint64_t sample = 0; sample < 8; ++sample) {
        std::string shuffled = alphabet;   // Fisher-Yates
        for (std::size_t k = shuffled.size() - 1; k > 0; --k) {
            const double u = seeded_uniform(2026, sample, k);   // (0, 1]
            std::swap(shuffled[k], shuffled[std::min(k, static_cast<std::size_t>(u * static_cast<double>(k + 1)))]);
        }
        const std::string random = shuffled.substr(0, 60);
        REQUIRE(model->encode_text(random + random).ids.size() == 120);
        repeated.push_back(random + random);
    }
    double best_induction = 0.0;
    for (const HeadMetrics& m : mean_metrics(*model, repeated)) best_induction = std::max(best_induction, *m.induction);
    CHECK(best_induction > 0.5);
}
