// The encoder-decoder families in process (T5, Flan-T5, BART; tools/make_seq2seq_checkpoints.py):
// T5's relative position buckets by hand, the three kinds of maps and the logits against
// PyTorch's through the Model interface, a switched-off head of each kind moving the next
// token's logits, greedy generation, weights exported as stored, and what is refused.

#include "core/base/error.h"
#include "core/models/generate.h"
#include "core/models/hf/weight_files.h"
#include "core/models/model_registry.h"
#include "core/nn/position.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/";

nlohmann::json manifest() {
    std::ifstream in(golden_dir() + "/seq2seq/cases.json");
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/seq2seq/cases.json (run tools/make_seq2seq_checkpoints.py)");
    return nlohmann::json::parse(in);
}

// Maps [H, Tq, Tk] of `layers` (kept) against the golden tensor `kind`.attn.L.
void check_maps(const LayerTraces& layers, const SafetensorsFile& golden, const std::string& kind, double tolerance) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::vector<float> expected = golden.get(kind + ".attn." + std::to_string(l)).to_floats();
        std::size_t at = 0;
        for (const HeadTrace& head : layers[l].heads) {
            const Matrix& w = head.weights;
            REQUIRE(at + static_cast<std::size_t>(w.size()) <= expected.size());
            CHECK(max_abs_diff(w.data(), expected.data() + at, static_cast<std::size_t>(w.size())) <= tolerance);
            at += static_cast<std::size_t>(w.size());
        }
        CHECK(at == expected.size());
    }
    CHECK_FALSE(golden.contains(kind + ".attn." + std::to_string(layers.size())));
}

HeadMask mask_of(const nlohmann::json& disabled, Eigen::Index layers, Eigen::Index heads) {
    HeadMask mask(layers, heads);
    for (const auto& [layer, hs] : disabled.items()) {
        for (const auto& h : hs) mask.set(std::stoi(layer), h.get<int>());
    }
    return mask;
}

}   // namespace

TEST_CASE("seq2seq: T5's relative position buckets, worked by hand") {
    // Bidirectional, 32 buckets up to 128 (t5-small): offsets under 8 exact, keys after the
    // query in the upper 16, then log-spaced: 8 + floor(log(d / 8) / log(16) * 8).
    CHECK(relative_position_bucket(0, true, 32, 128) == 0);
    CHECK(relative_position_bucket(-1, true, 32, 128) == 1);
    CHECK(relative_position_bucket(1, true, 32, 128) == 17);
    CHECK(relative_position_bucket(-7, true, 32, 128) == 7);
    CHECK(relative_position_bucket(-8, true, 32, 128) == 8);
    CHECK(relative_position_bucket(-16, true, 32, 128) == 10);    // log 2 / log 16 * 8 = 2
    CHECK(relative_position_bucket(-64, true, 32, 128) == 14);    // log 8 / log 16 * 8 = 6
    CHECK(relative_position_bucket(-128, true, 32, 128) == 15);   // 16, clamped to the last
    CHECK(relative_position_bucket(200, true, 32, 128) == 31);
    // Causal: a later key is offset 0; earlier ones exact under 16, then 16 + floor(log(d / 16) / log(8) * 16).
    CHECK(relative_position_bucket(5, false, 32, 128) == 0);
    CHECK(relative_position_bucket(-15, false, 32, 128) == 15);
    CHECK(relative_position_bucket(-16, false, 32, 128) == 16);
    CHECK(relative_position_bucket(-32, false, 32, 128) == 21);   // log 2 / log 8 * 16 = 5.33
    CHECK(relative_position_bucket(-1000, false, 32, 128) == 31);
}

TEST_CASE("seq2seq in process: the encoder's, the decoder's and the cross-attention's maps and the logits equal "
          "PyTorch's") {
    const nlohmann::json cases = manifest();
    const double tolerance = cases.at("tolerance").get<double>();
    int n_cases = 0;
    for (const auto& c : cases.at("cases")) {
        const std::string name = c.at("name");
        CAPTURE(name);
        const auto model = open_model(checkpoints + c.at("checkpoint").get<std::string>(), {});
        const ModelInfo& info = model->info();
        CHECK(info.encoder_decoder);
        CHECK(info.causal);
        CHECK(info.encoder_layers == c.at("encoder_layers").get<Eigen::Index>());
        CHECK(info.n_layers == c.at("decoder_layers").get<Eigen::Index>());
        const bool text = c.contains("text");
        const ModelInput source = text ? model->encode_text(c.at("text").get<std::string>())
                                       : model->encode_ids(c.at("source").get<std::vector<std::int64_t>>());
        const ModelInput input =
            text ? model->encode_target_text(source, c.at("target_text").get<std::string>())
                 : model->encode_target_ids(source, c.at("target").get<std::vector<std::int64_t>>());
        REQUIRE(source.source);
        CHECK(source.source->ids == c.at("source").get<std::vector<std::int64_t>>());
        CHECK(input.ids == c.at("target").get<std::vector<std::int64_t>>());
        RunOptions options;
        const auto& disabled = c.at("disabled");
        if (disabled.contains("decoder"))
            options.disabled_heads = mask_of(disabled.at("decoder"), info.n_layers, info.n_heads);
        if (disabled.contains("encoder"))
            options.disabled_encoder_heads = mask_of(disabled.at("encoder"), info.encoder_layers, info.n_heads);
        if (disabled.contains("cross"))
            options.disabled_cross_heads = mask_of(disabled.at("cross"), info.n_layers, info.n_heads);
        const ModelTrace trace = model->forward(input, options);
        const SafetensorsFile golden = SafetensorsFile::open(golden_dir() + "/seq2seq/" + name + ".safetensors");
        check_maps(trace.encoder_layers, golden, "encoder", tolerance);
        check_maps(trace.layers, golden, "decoder", tolerance);
        check_maps(trace.cross_layers, golden, "cross", tolerance);
        const std::vector<float> logits = golden.get("logits").to_floats();
        float largest = 1.0f;
        for (const float v : logits) largest = std::max(largest, std::abs(v));
        const Matrix& ours = trace.logits.get();
        REQUIRE(static_cast<std::size_t>(ours.size()) == logits.size());
        CHECK(max_abs_diff(ours.data(), logits.data(), logits.size()) <= tolerance * largest);
        if (c.contains("generated")) {
            const ModelInput generated = generate_greedy(*model, source, c.at("generate").get<Eigen::Index>());
            CHECK(generated.ids == c.at("generated").get<std::vector<std::int64_t>>());
            REQUIRE(generated.source);
            CHECK(generated.source->ids == source.source->ids);
        }
        ++n_cases;
    }
    CHECK(n_cases == 8);
}

TEST_CASE("seq2seq: a typed target's labels and spans: the start token's, then each token's in the target text") {
    const auto bart = open_model(checkpoints + "bart_tiny", {});
    const ModelInput source = bart->encode_text("the cat sat on the mat.");
    REQUIRE(source.source);
    CHECK(source.source->labels.front() == "<s>");
    CHECK(source.source->labels.back() == "</s>");
    CHECK(source.ids == std::vector<std::int64_t>{2});   // the start token alone
    const ModelInput target = bart->encode_target_text(source, "a cat");
    // <s> a Ġcat </s> shifted right after </s> (decoder_start_token_id 2): </s> <s> a Ġcat
    REQUIRE(target.ids.size() == 4);
    CHECK(target.ids[0] == 2);
    CHECK(target.ids[1] == 0);
    CHECK(target.labels[2] == "a");
    CHECK(target.labels[3] == " cat");
    REQUIRE(target.spans.size() == 4);
    CHECK(target.spans[0] == std::pair<std::size_t, std::size_t>{0, 0});
    CHECK(target.spans[3] == std::pair<std::size_t, std::size_t>{1, 5});
    CHECK(target.source == source.source);
}

TEST_CASE("seq2seq: a head switched off, of each kind, moves the next token's logits and only its own layer's") {
    for (const char* name : {"t5_tiny", "bart_tiny"}) {
        CAPTURE(name);
        const auto model = open_model(checkpoints + name, {});
        const ModelInfo& info = model->info();
        const ModelInput input = model->encode_target_ids(model->encode_ids(std::vector<std::int64_t>{9, 30, 41, 7, 2}),
                                                          std::vector<std::int64_t>{info.decoder_start_id, 12, 50});
        const ModelTrace intact = model->forward(input, {});
        for (const int kind : {0, 1, 2}) {
            CAPTURE(kind);
            RunOptions options;
            HeadMask& mask = kind == 0 ? options.disabled_encoder_heads
                                       : (kind == 1 ? options.disabled_heads : options.disabled_cross_heads);
            mask = HeadMask(kind == 0 ? info.encoder_layers : info.n_layers, info.n_heads);
            mask.set(kind == 0 ? 0 : 1, 2);
            const ModelTrace ablated = model->forward(input, options);
            const Eigen::Index last = intact.logits.rows() - 1;
            CHECK((ablated.logits.get().row(last) - intact.logits.get().row(last)).cwiseAbs().maxCoeff() > 1e-3);
            // The maps before the switched-off head's layer (the encoder's first, for a decoder head) are unchanged.
            CHECK(ablated.encoder_layers[0].heads[2].weights == intact.encoder_layers[0].heads[2].weights);
            CHECK(ablated.layers[0].heads[0].weights == intact.layers[0].heads[0].weights);
        }
    }
}

TEST_CASE("seq2seq: export-weights gives back every stored tensor but the tied copies and the unused bias table") {
    for (const char* name : {"t5_tiny", "flan_t5_tiny", "bart_tiny"}) {
        CAPTURE(name);
        const auto model = open_model(checkpoints + name, {});
        const std::vector<OwnedTensor> exported = model->export_weights();
        const HfWeights stored = HfWeights::open(checkpoints + name);
        std::size_t found = 0;
        for (const OwnedTensor& t : exported) {
            CAPTURE(t.name);
            const std::string stored_name = stored.tensors().count(t.name) ? t.name : "model." + t.name;
            REQUIRE(stored.tensors().count(stored_name) == 1);
            CHECK(stored.tensors().at(stored_name).tensor->to_floats() == t.values);
            ++found;
        }
        // t5_tiny stores the embedding's two tied copies and the first cross-attention's bias table.
        const std::size_t extras = std::string(name) == "t5_tiny" ? 3 : 0;
        CHECK(found + extras == stored.tensors().size());
    }
}

TEST_CASE("seq2seq: a tokenizer.json this build cannot read leaves the model reading ids, saying why") {
    TempDir dir;
    const std::string folder = dir.path().string();
    for (const char* file : {"config.json", "model.safetensors"})
        std::filesystem::copy_file(checkpoints + "t5_tiny/" + file, dir.file(file));
    write_bytes(dir.file("tokenizer.json"),
                R"({"version": "1.0", "normalizer": null, "pre_tokenizer": null,
                    "model": {"type": "WordLevel", "vocab": {"<pad>": 0}, "unk_token": "<pad>"},
                    "added_tokens": [], "post_processor": null, "decoder": null})");
    const auto model = open_model(folder, {});
    CHECK(model->info().reads_ids_only);
    REQUIRE(model->info().warnings.size() == 1);
    CHECK(model->info().warnings[0].find("the tokenizer is not read, so the model takes token ids") == 0);
    CHECK(model->info().warnings[0].find("\"WordLevel\" is not read yet") != std::string::npos);
    CHECK(model->forward(model->encode_ids(std::vector<std::int64_t>{5, 6}), {}).logits.rows() == 1);
}

TEST_CASE("seq2seq: BART's vocab.json + merges.txt without tokenizer.json read ids alone, saying why") {
    TempDir dir;
    for (const char* file : {"config.json", "model.safetensors"})
        std::filesystem::copy_file(checkpoints + "bart_tiny/" + file, dir.file(file));
    write_bytes(dir.file("vocab.json"), R"({"a": 0, "b": 1})");
    write_bytes(dir.file("merges.txt"), "#version: 0.2\n");
    const auto model = open_model(dir.path().string(), {});
    CHECK(model->info().reads_ids_only);
    REQUIRE(model->info().warnings.size() == 1);
    CHECK(model->info().warnings[0].find("vocab.json + merges.txt without tokenizer.json") != std::string::npos);
    CHECK_THROWS_WITH_AS(model->encode_text("a b"), doctest::Contains("so it takes --tokens, not text"), Error);
    // A tokenizer.json that is not one is an error for BART (only T5's is known to be unread).
    write_bytes(dir.file("tokenizer.json"), "version https://git-lfs.github.com/spec/v1\n");
    CHECK_THROWS_AS(open_model(dir.path().string(), {}), Error);
}

TEST_CASE("seq2seq: the decoder's layer stages computed again equal the run's maps, and generation stops at the "
          "decoder's limit") {
    const auto bart = open_model(checkpoints + "bart_tiny", {});
    const ModelInput source = bart->encode_ids(std::vector<std::int64_t>{0, 31, 47, 8, 2});
    const ModelInput input = bart->encode_target_ids(source, std::vector<std::int64_t>{2, 0, 31});
    RunOptions options;
    options.keep_layer_inputs = true;
    const ModelTrace trace = bart->forward(input, options);
    for (Eigen::Index l = 0; l < bart->info().n_layers; ++l) {
        const AttentionTrace stages = bart->layer_stages(trace, l, {}, -1);
        for (std::size_t h = 0; h < stages.heads.size(); ++h) {
            CHECK(stages.heads[h].weights == trace.layers[static_cast<std::size_t>(l)].heads[h].weights);
            CHECK(stages.heads[h].scores.size() != 0);
        }
    }
    // bart_tiny never says </s> here: 100 steps asked, max_position_embeddings (64) given.
    const ModelInput generated = generate_greedy(*bart, source, 100);
    CHECK(static_cast<Eigen::Index>(generated.ids.size()) == bart->info().max_tokens);
}

TEST_CASE("seq2seq: what the model cannot read is refused by name") {
    const auto t5 = open_model(checkpoints + "t5_tiny", {});
    const ModelInput source = t5->encode_ids(std::vector<std::int64_t>{5, 6});
    CHECK_THROWS_WITH_AS(t5->encode_target_ids(source, std::vector<std::int64_t>{0, 96}), doctest::Contains("96"),
                         Error);
    CHECK_THROWS_WITH_AS(t5->encode_target_text(source, "hello"), doctest::Contains("no tokenizer read"), Error);
    const auto bart = open_model(checkpoints + "bart_tiny", {});
    CHECK_THROWS_WITH_AS(bart->encode_text(""), doctest::Contains("text: the sentence is empty"), Error);
    CHECK_THROWS_WITH_AS(t5->forward(*source.source, {}), doctest::Contains("source and a target"), Error);
    // 60,000 source tokens: 2 x 4 x 60,000^2 kept encoder maps (115 GB) are refused before any is made.
    const std::vector<std::int64_t> long_source(60000, 7);
    CHECK_THROWS_WITH_AS(t5->forward(t5->encode_ids(long_source), {}),
                         doctest::Contains("a source of 60000 tokens and a target of 1 (the encoder's and the "
                                           "cross-attention's maps, kept): needs"),
                         Error);
    const auto gpt2 = open_model(checkpoints + "gpt2_tiny", {});
    const ModelInput ids = gpt2->encode_ids(std::vector<std::int64_t>{5, 6});
    CHECK_THROWS_WITH_AS(gpt2->encode_target_ids(ids, std::vector<std::int64_t>{0}),
                         doctest::Contains("reads no target"), Error);
    CHECK_THROWS_WITH_AS(generate_greedy(*gpt2, ids, 3), doctest::Contains("encoder-decoder"), Error);
}
