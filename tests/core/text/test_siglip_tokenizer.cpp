// SigLIP's tokenizer: transformers' SiglipTokenizer steps on spiece.model.
//  - tests/golden/siglip/tokenizer.json: the ids of each label, as tools/make_siglip_tokenizer.py's
//    port of tokenization_siglip.py gives them on Python's SentencePiece (padding="max_length"),
//    for the committed tests/checkpoints/siglip_tiny/spiece.model (a 2000-piece unigram model
//    trained there; that port gives transformers' own test ids on the real 32000-piece model).
//  - spans and labels worked by hand; the tower's wiring (the folder's tokenizer for typed
//    labels, the refusal without spiece.model); bad files refused in one line.
#include "core/base/error.h"
#include "core/models/model_registry.h"
#include "core/text/tokenizer/siglip_tokenizer.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::tokenizer;
using headscope::test::TempDir;
using headscope::test::write_bytes;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;
const std::string folder = source_dir + "/tests/checkpoints/siglip_tiny";

SiglipTokenizer tiny_tokenizer() {
    return SiglipTokenizer(folder + "/spiece.model", folder + "/tokenizer_config.json");
}

std::vector<std::int32_t> ids_of(const std::vector<EncodedToken>& tokens) {
    std::vector<std::int32_t> ids;
    for (const EncodedToken& t : tokens) ids.push_back(t.id);
    return ids;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("no headscope::Error thrown");
    return "";
}

}   // namespace

TEST_CASE("siglip tokenizer: every golden label's ids equal SiglipTokenizer's, padding included") {
    std::ifstream in(source_dir + "/tests/golden/siglip/tokenizer.json");
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/siglip/tokenizer.json (run tools/make_siglip_tokenizer.py)");
    const nlohmann::json golden = nlohmann::json::parse(in);
    const SiglipTokenizer tokenizer = tiny_tokenizer();
    int n = 0;
    for (const auto& c : golden.at("cases")) {
        const std::string text = c.at("text");
        CAPTURE(text);
        CHECK(ids_of(tokenizer.encode(text, "label")) == c.at("ids").get<std::vector<std::int32_t>>());
        ++n;
    }
    CHECK(n >= 16);
}

TEST_CASE("siglip tokenizer: spans point at the label's own bytes, what is added has none") {
    const std::string text = "A Photo, of a DOG.";
    const std::vector<EncodedToken> tokens = tiny_tokenizer().encode(text, "label");
    REQUIRE(tokens.size() == 64);
    // ▁a ▁photo ▁of ▁a ▁dog </s> + 58 </s>: each word's token from the space before it (the
    // first from the start), the comma and the full stop in none.
    const std::vector<std::string> words = {"A", " Photo", " of", " a", " DOG"};
    for (std::size_t i = 0; i < words.size(); ++i) {
        CAPTURE(i);
        CHECK_FALSE(tokens[i].special);
        CHECK(text.substr(tokens[i].begin, tokens[i].end - tokens[i].begin) == words[i]);
    }
    for (std::size_t i = words.size(); i < tokens.size(); ++i) {
        CHECK(tokens[i].special);
        CHECK(tokens[i].id == 1);
        CHECK(tokens[i].begin == tokens[i].end);
    }
    // A special token typed in the label keeps its span; the spaces it strips belong to nothing.
    const std::string typed = "a cat  </s> dog";
    const std::vector<EncodedToken> with_special = tiny_tokenizer().encode(typed, "label");
    REQUIRE(with_special.size() == 64);
    CHECK(with_special[2].special);
    CHECK(typed.substr(with_special[2].begin, with_special[2].end - with_special[2].begin) == "</s>");
    // A character the pieces lack is its UTF-8 bytes (<0xE7> <0x8C> <0xAB>): each byte's token
    // points at the whole character, none is taken for an added token.
    const std::string cat = "a \xe7\x8c\xab cat";
    const std::vector<EncodedToken> bytes = tiny_tokenizer().encode(cat, "label");
    int n_bytes = 0;
    for (const EncodedToken& t : bytes) {
        if (t.special || cat.substr(t.begin, t.end - t.begin) != "\xe7\x8c\xab") continue;
        CHECK(t.begin == 2);
        ++n_bytes;
    }
    CHECK(n_bytes == 3);
}

TEST_CASE("siglip tokenizer: labels read as the words, byte pieces spell their character") {
    const SiglipTokenizer tokenizer = tiny_tokenizer();
    std::vector<std::int32_t> ids = ids_of(tokenizer.encode("a photo", "label"));
    CHECK(tokenizer.pieces().labels(std::span(ids.data(), 3)) == std::vector<std::string>{" a", " photo", "</s>"});
    // 猫 is not a piece: its three UTF-8 bytes are <0xE7> <0x8C> <0xAB>, each labelled 猫.
    ids = ids_of(tokenizer.encode("\xe7\x8c\xab", "label"));
    const std::vector<std::string> labels = tokenizer.pieces().labels(std::span(ids.data(), 4));
    CHECK(labels[0] == " ");
    CHECK(labels[1] == "\xe7\x8c\xab");
    CHECK(labels[3] == "\xe7\x8c\xab");
}

TEST_CASE("siglip: a typed label reaches the text tower as SiglipTokenizer's ids") {
    const auto model = open_model(folder, {});
    const ModelInput label = model->encode_label("A Photo of a DOG.");
    const std::vector<std::int32_t> expected = ids_of(tiny_tokenizer().encode("a photo of a dog", "label"));
    CHECK(label.ids == std::vector<std::int64_t>(expected.begin(), expected.end()));
    CHECK(label.embeddings.rows() == 64);
    CHECK(label.labels[1] == " photo");
    // One past the 64 positions is refused, naming the field.
    std::string long_label;
    for (int i = 0; i < 70; ++i) long_label += "word ";
    CHECK(error_of([&] { model->encode_label(long_label); }).find("text_config.max_position_embeddings") !=
          std::string::npos);
    // The so400m tiny has no spiece.model: ids only.
    const auto bare = open_model(source_dir + "/tests/checkpoints/siglip_tiny_so400m_bf16", {});
    CHECK(error_of([&] { bare->encode_label("a cat"); }).find("no spiece.model (SigLIP's tokenizer)") !=
          std::string::npos);
}

TEST_CASE("siglip tokenizer: bad files are refused in one line naming them") {
    const TempDir dir;
    write_bytes(dir.file("spiece.model"), "not a protobuf at all \xff\xff\xff");
    CHECK(error_of([&] {
              SiglipTokenizer(dir.file("spiece.model"), "");
          }).starts_with(dir.file("spiece.model") + ": not a SentencePiece model"));
    CHECK(error_of([&] { SiglipTokenizer(dir.file("missing.model"), ""); }).starts_with(dir.file("missing.model")));
    write_bytes(dir.file("tokenizer_config.json"), R"({"eos_token": "<eos>"})");
    CHECK(error_of([&] { SiglipTokenizer(folder + "/spiece.model", dir.file("tokenizer_config.json")); }) ==
          dir.file("tokenizer_config.json") + ": the eos_token \"<eos>\" is not a piece of " + folder +
              "/spiece.model");
    write_bytes(dir.file("tokenizer_config.json"), R"({"model_max_length": "long"})");
    CHECK(error_of([&] {
              SiglipTokenizer(folder + "/spiece.model", dir.file("tokenizer_config.json"));
          }).starts_with(dir.file("tokenizer_config.json") + ": model_max_length: expected"));
}
