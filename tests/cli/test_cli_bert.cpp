// Hugging Face BERT checkpoint folders through headscope-cli (the dump against PyTorch
// is test_cli_families.cpp's): sentence pairs and their token types, info, and broken
// checkpoints, each refused with one line. The last
// cases use the loader directly: output labels, byte spans and exported names.

#include "cli/cli_runner.h"
#include "core/models/hf/families/bert.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;
const std::string checkpoints = source_dir + "/tests/checkpoints";
const std::string pair_text = "The dog ran to the park. [SEP] It was playing with a red ball!";

double above_diagonal(const std::vector<float>& w, std::int64_t T) {   // head 0
    double above = 0.0;
    for (std::int64_t i = 0; i < T; ++i) {
        for (std::int64_t j = i + 1; j < T; ++j) above += w[static_cast<std::size_t>(i * T + j)];
    }
    return above;
}

}   // namespace

TEST_CASE("bert: a typed [SEP] makes a sentence pair whose token types reach the model") {
    TempDir dir;
    const std::string model = checkpoints + "/bert_tiny";
    REQUIRE(run_dump(model, {"--text", pair_text}, dir.file("p.safetensors")).exit_code == 0);
    const auto pair = SafetensorsFile::open(dir.file("p.safetensors"));
    const auto ids = int64s(pair, "input_ids");
    CHECK(tokens_of(pair) == std::vector<std::string>{"[CLS]", "the", "dog", "ran", "to", "the", "park", ".", "[SEP]",
                                                      "it", "was", "play", "##ing", "with", "a", "red", "ball", "!",
                                                      "[SEP]"});
    // The same ids as --tokens are all of type 0: every map changes.
    REQUIRE(run_dump(model, {"--tokens", joined_ids(ids)}, dir.file("t.safetensors")).exit_code == 0);
    const auto flat = SafetensorsFile::open(dir.file("t.safetensors"));
    CHECK(int64s(flat, "input_ids") == ids);
    for (const char* key : {"attn.0", "attn.1", "logits"}) {
        CAPTURE(key);
        const auto a = floats(pair, key);
        const auto b = floats(flat, key);
        CHECK(max_abs_diff(a.data(), b.data(), a.size()) > 1e-3);
    }
    // Only the first [SEP] splits; a later one is a token of B.
    REQUIRE(run_dump(model, {"--text", "the cat [SEP] sat [SEP] on"}, dir.file("s.safetensors")).exit_code == 0);
    CHECK(tokens_of(SafetensorsFile::open(dir.file("s.safetensors"))) ==
          std::vector<std::string>{"[CLS]", "the", "cat", "[SEP]", "sat", "[SEP]", "on", "[SEP]"});
}

TEST_CASE("bert: --causal on and --disable-heads change the maps") {
    TempDir dir;
    const std::string model = checkpoints + "/bert_tiny";
    const std::vector<std::string> text = {"--text", "the cat sat on the mat."};
    REQUIRE(run_dump(model, text, dir.file("p.safetensors")).exit_code == 0);
    REQUIRE(run_dump(model, text, dir.file("c.safetensors"), {"--causal", "on"}).exit_code == 0);
    REQUIRE(run_dump(model, text, dir.file("a.safetensors"), {"--disable-heads", "0.1"}).exit_code == 0);
    const auto plain = SafetensorsFile::open(dir.file("p.safetensors"));
    const auto causal = SafetensorsFile::open(dir.file("c.safetensors"));
    const auto ablated = SafetensorsFile::open(dir.file("a.safetensors"));
    CHECK(causal.metadata().at("causal") == "on");
    const std::int64_t T = plain.get("attn.0").shape[1];
    CHECK(above_diagonal(floats(causal, "attn.0"), T) == 0.0);
    CHECK(floats(ablated, "attn.0") == floats(plain, "attn.0"));
    CHECK(floats(ablated, "attn.1") != floats(plain, "attn.1"));
    CHECK(floats(ablated, "logits") != floats(plain, "logits"));
}

TEST_CASE("bert: info describes the architecture") {
    // Embeddings 60 x 16 + 32 x 16 + 2 x 16 + Norm 32 = 1536; per layer q, k, v, out
    // 4 x 272 + Norm 32 + intermediate 48 x 16 + 48 + output 16 x 48 + 16 + Norm 32
    // = 2752, twice: 7040 for the encoder.
    check_output_has(run_cli({"info", "--model", checkpoints + "/bert_tiny"}),
                     {"Hugging Face BertForMaskedLM", "max tokens: 32",
                      "layers L = 2, heads H = 2, width E = 16, head width Dh = 8, MLP width = 48", "causal: no",
                      "\"hidden_act\":\"gelu\"", "\"layer_norm_eps\":\"1e-12\"",
                      // + transform 272 + Norm 32 + bias 60; the stored decoder equals the
                      // word embeddings: counted once
                      "parameters: 7404", "tied to word_embeddings (cls.predictions.decoder.weight equals it)",
                      "vocab.txt + tokenizer_config.json (WordPiece, lower-cased)"});
    check_output_has(run_cli({"info", "--model", checkpoints + "/bert_tiny_bf16"}),
                     {"Hugging Face BertModel", "parameters: 7312" /* + pooler 272 */, "\"head\":\"none\""});
    check_output_has(run_cli({"info", "--model", checkpoints + "/bert_tiny_cls"}),
                     {"Hugging Face BertForSequenceClassification", "3 labels", "(WordPiece, cased)",
                      "parameters: 7363" /* + pooler 272 + classifier 51 */});
}

TEST_CASE("bert: broken folders and bad input are one line, exit 2, no output") {
    TempDir dir;
    const std::string out = dir.file("o.safetensors");
    const std::vector<std::string> tokens = {"--tokens", "2,16,3"};
    const std::string b = checkpoints + "/bad/";
    check_bad_input(run_dump(b + "bert_wrong_shape", tokens, out),
                    "'bert.encoder.layer.0.intermediate.dense.weight' has shape [16, 48], expected [48, 16] "
                    "(config.json: hidden_size = 16, intermediate_size = 48)");
    check_bad_input(run_dump(b + "bert_missing_tensor", tokens, out),
                    "has no tensor 'bert.encoder.layer.1.attention.output.LayerNorm.bias'");
    check_bad_input(
        run_dump(b + "bert_unknown_tensor", tokens, out),
        "unexpected tensor 'bert.encoder.layer.0.attention.self.query.weights' (not part of BertForMaskedLM");
    check_bad_input(run_dump(b + "bert_decoder_shape", tokens, out),
                    "'cls.predictions.decoder.weight' has shape [59, 16], expected [60, 16]");
    check_bad_input(run_dump(b + "bert_vocab_mismatch", tokens, out),
                    "'bert.embeddings.word_embeddings.weight' has shape [60, 16], expected [64, 16] "
                    "(config.json: vocab_size = 64");
    check_bad_input(run_dump(b + "bert_position_embedding_type", tokens, out),
                    "config.json: field 'position_embedding_type': 'relative_key' is not supported");
    check_bad_input(run_dump(b + "bert_is_decoder", tokens, out),
                    "config.json: field 'is_decoder': true is not supported");
    // One token type: a single sentence works, a pair is refused.
    check_bad_input(run_dump(b + "bert_single_type", {"--text", "the cat [SEP] sat"}, out),
                    "needs token type 1, but " + b + "bert_single_type has config.json: type_vocab_size = 1");
    CHECK(run_dump(b + "bert_single_type", {"--text", "the cat sat"}, dir.file("one.safetensors")).exit_code == 0);

    const std::string model = checkpoints + "/bert_tiny";
    check_bad_input(run_dump(model, {"--tokens", "2,60"}, out), "--tokens: id 60 at position 1 is outside 0..59");
    check_bad_input(run_dump(model, {"--tokens", "2,-1"}, out), "--tokens");
    std::string long_text;
    for (int i = 0; i < 31; ++i) long_text += " cat";   // 31 words + [CLS] + [SEP] = 33 tokens
    check_bad_input(run_dump(model, {"--text", long_text}, out), "text: 33 tokens, more than");
    check_bad_input(run_dump(model, {"--text", long_text}, out), "limit of 32 (config.json: max_position_embeddings)");
    check_bad_input(run_dump(model, {"--text", " "}, out), "text: the sentence is empty");
    check_bad_input(run_dump(model, {"--text", "the \xff"}, out), "invalid UTF-8");
    check_bad_input(run_dump(model, {"--image", source_dir + "/tests/images/rgb.png"}, out), "takes text, not images");

    // Without vocab.txt --tokens still works, --text is refused.
    const std::string bare = copy_folder(dir, model);
    std::filesystem::remove(std::filesystem::path(bare) / "vocab.txt");
    check_bad_input(run_dump(bare, {"--text", "the cat"}, out), "no tokenizer (tokenizer.json, or BERT's vocab.txt)");
    const RunResult r = run_dump(bare, tokens, dir.file("t.safetensors"));
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(tokens_of(SafetensorsFile::open(dir.file("t.safetensors"))) == std::vector<std::string>{"2", "16", "3"});
    // A tokenizer this build does not reproduce refuses --text, naming the field.
    write_bytes(
        (std::filesystem::path(copy_folder(dir, checkpoints + "/bert_tiny_bf16")) / "tokenizer_config.json").string(),
        "{\"tokenizer_class\": \"BertJapaneseTokenizer\"}");
    check_bad_input(
        run_dump(dir.file("bert_tiny_bf16"), {"--text", "the cat"}, out),
        "tokenizer_config.json: tokenizer_class: \"BertJapaneseTokenizer\" is not supported with vocab.txt");
    CHECK(run_dump(dir.file("bert_tiny_bf16"), tokens, dir.file("u.safetensors")).exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("bert: output labels, spans of a pair, and weights under transformers' names") {
    const auto mlm = load_hf_encoder(bert_family(), checkpoints + "/bert_tiny");
    CHECK(mlm->output_label(16) == "cat");
    CHECK(mlm->output_label(32) == "##ing");
    CHECK(mlm->output_label(4) == "[MASK]");

    // B's spans point into the whole text; the typed [SEP] is the one closing A.
    const std::string text = "the cat [SEP] sat";
    const ModelInput input = mlm->encode_text(text);
    REQUIRE(input.spans.size() == 6);   // [CLS] the cat [SEP] sat [SEP]
    CHECK(input.spans[1] == std::pair<std::size_t, std::size_t>{0, 3});
    CHECK(input.spans[3] == std::pair<std::size_t, std::size_t>{8, 13});
    CHECK(input.spans[4] == std::pair<std::size_t, std::size_t>{14, 17});
    CHECK(input.spans[5] == std::pair<std::size_t, std::size_t>{17, 17});

    std::set<std::string> names;
    for (const OwnedTensor& t : mlm->export_weights()) names.insert(t.name);
    CHECK(names.count("embeddings.word_embeddings.weight") == 1);
    CHECK(names.count("embeddings.token_type_embeddings.weight") == 1);
    CHECK(names.count("encoder.layer.1.attention.output.LayerNorm.weight") == 1);
    CHECK(names.count("cls.predictions.transform.LayerNorm.bias") == 1);
    CHECK(names.count("cls.predictions.bias") == 1);
    CHECK(names.count("cls.predictions.decoder.weight") == 0);   // tied: the word embeddings
    CHECK(names.size() == 5 + 2 * 16 + 5);

    const auto cls = load_hf_encoder(bert_family(), checkpoints + "/bert_tiny_cls");
    CHECK(cls->info().classifier);
    CHECK(cls->output_label(2) == "positive");
    std::int64_t exported = 0;
    for (const OwnedTensor& t : cls->export_weights()) {
        CHECK(t.name.rfind("bert.", 0) == std::string::npos);
        exported += static_cast<std::int64_t>(t.values.size());
    }
    CHECK(exported == cls->info().n_parameters);

    const auto bare =
        load_hf_encoder(bert_family(), checkpoints + "/bert_tiny_bf16");   // stored as LayerNorm.gamma / .beta
    names.clear();
    for (const OwnedTensor& t : bare->export_weights()) names.insert(t.name);
    CHECK(names.count("embeddings.LayerNorm.weight") == 1);
    CHECK(names.count("pooler.dense.weight") == 1);
    CHECK_FALSE(bare->info().classifier);
}

TEST_CASE("bert: exported weights load back, and a separate decoder and decoder.bias are read") {
    TempDir dir;
    const std::string original = checkpoints + "/bert_tiny";
    const std::string folder = copy_folder(dir, original);
    std::filesystem::remove(std::filesystem::path(folder) / "model.safetensors");
    // export-weights writes transformers' names without the prefix: a folder it loads from.
    const RunResult exported = run_cli({"export-weights", "--model", original, "--out", folder + "/model.safetensors"});
    INFO("stderr: " << exported.err);
    REQUIRE(exported.exit_code == 0);
    const std::vector<std::string> text = {"--text", pair_text};
    REQUIRE(run_dump(original, text, dir.file("a.safetensors")).exit_code == 0);
    REQUIRE(run_dump(folder, text, dir.file("b.safetensors")).exit_code == 0);
    const auto a = SafetensorsFile::open(dir.file("a.safetensors"));
    const auto b = SafetensorsFile::open(dir.file("b.safetensors"));
    for (const char* key : {"attn.0", "attn.1", "logits"}) CHECK(floats(a, key) == floats(b, key));
    check_output_has(run_cli({"info", "--model", folder}), {"parameters: 7404", "decoder tied to word_embeddings\""});

    // The bias under its other tied name, and a decoder of its own (untied): counted, used.
    std::vector<OwnedTensor> weights = load_hf_encoder(bert_family(), original)->export_weights();
    for (OwnedTensor& t : weights) {
        if (t.name == "cls.predictions.bias") t.name = "cls.predictions.decoder.bias";
    }
    OwnedTensor decoder = weights.front();   // embeddings.word_embeddings.weight [V, E]
    REQUIRE(decoder.name == "embeddings.word_embeddings.weight");
    decoder.name = "cls.predictions.decoder.weight";
    for (float& v : decoder.values) v *= 0.5f;
    weights.push_back(decoder);
    const auto write = [&] {
        std::vector<TensorToWrite> tensors;
        for (const OwnedTensor& t : weights) tensors.push_back(tensor_f32(t.name, t.shape, t.values));
        write_safetensors(folder + "/model.safetensors", tensors, {});
    };
    write();
    check_output_has(run_cli({"info", "--model", folder}),
                     {"parameters: 8364" /* + the decoder's 60 x 16 */, "decoder cls.predictions.decoder.weight"});
    REQUIRE(run_dump(folder, text, dir.file("c.safetensors")).exit_code == 0);
    const auto c = SafetensorsFile::open(dir.file("c.safetensors"));
    CHECK(floats(c, "attn.1") == floats(a, "attn.1"));
    CHECK(floats(c, "logits") != floats(a, "logits"));
    // Both bias names, disagreeing: transformers would tie them, so which one is meant?
    weights.push_back({"cls.predictions.bias", {60}, std::vector<float>(60, 0.0f)});
    write();
    check_bad_input(run_dump(folder, text, dir.file("d.safetensors")),
                    "'cls.predictions.bias' and 'cls.predictions.decoder.bias' differ");
}
