// T5's tokenizer.json: the Unigram model and SentencePiece's Precompiled normalizer. The
// folder and the ids are tools/make_t5_tokenizer.py's (the SentencePiece library's own
// segmentation, cut at the added tokens as T5TokenizerFast cuts them); the Viterbi, the
// unknown token and the trie are also worked here by hand.
#include "core/base/error.h"
#include "core/text/tokenizer/normalized_text.h"
#include "core/text/tokenizer/precompiled_charsmap.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "core/text/tokenizer/unigram_model.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::tokenizer;

namespace {

std::vector<std::int32_t> ids_of(const TokenModel& model, std::string_view piece) {
    std::vector<ModelToken> out;
    model.tokenize(piece, out);
    std::vector<std::int32_t> ids;
    for (const ModelToken& t : out) ids.push_back(t.id);
    return ids;
}

UnigramModel small_model(bool byte_fallback) {
    // Scores chosen so that the best split of "abc" is "a" + "bc" (-1 - 1.5 = -2.5), above
    // "ab" + "c" (-2 - 1 = -3) and "a" + "b" + "c" (-3).
    Vocabulary vocab;
    const std::vector<std::pair<std::string, double>> pieces = {{"<unk>", 0.0},   {"a", -1.0},     {"b", -1.0},
                                                                {"c", -1.0},      {"ab", -2.0},    {"bc", -1.5},
                                                                {"<0xC3>", -5.0}, {"<0xA9>", -5.0}};
    std::vector<double> scores;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        std::string token = pieces[i].first;
        vocab.add(std::move(token), static_cast<std::int32_t>(i));
        scores.push_back(pieces[i].second);
    }
    return UnigramModel(std::move(vocab), std::move(scores), 0, byte_fallback);
}

}   // namespace

TEST_CASE("unigram: the split whose scores sum highest, unknown characters one <unk>, or their bytes") {
    const UnigramModel model = small_model(false);
    CHECK(ids_of(model, "abc") == std::vector<std::int32_t>{1, 5});
    CHECK(ids_of(model, "ab") == std::vector<std::int32_t>{4});   // -2 beats -1 - 1 by nothing: the first found
    // "é" and "ü" are covered by no piece: one <unk> for the run, spanning both characters.
    std::vector<ModelToken> out;
    model.tokenize("aéüb", out);
    REQUIRE(out.size() == 3);
    CHECK(out[1].id == 0);
    CHECK(out[1].begin == 1);
    CHECK(out[1].end == 5);
    // With byte fallback the bytes a character is made of, where the vocabulary has them all.
    const UnigramModel bytes = small_model(true);
    CHECK(ids_of(bytes, "aé") == std::vector<std::int32_t>{1, 6, 7});
    CHECK(ids_of(bytes, "aü") == std::vector<std::int32_t>{1, 0});   // <0xBC> missing: <unk>
}

TEST_CASE("precompiled charsmap: base64, a hand-built trie's longest rule, and damaged maps refused") {
    CHECK(decode_base64("aGVsbG8=") == std::optional<std::string>("hello"));
    CHECK(decode_base64("aGVsbG8") == std::optional<std::string>("hello"));
    CHECK_FALSE(decode_base64("a*==").has_value());
    // darts-clone units for one key, "a" -> the string at 0 ("xy"): the root's offset 1 puts
    // "a" (97) at unit 1 ^ 97 = 96, whose label is 97, with a leaf and offset 1: its value
    // unit is 96 ^ 1 = 97, holding 0.
    std::vector<std::uint32_t> units(128, 0);
    units[0] = 1u << 10;
    units[96] = 97u | (1u << 8) | (1u << 10);
    units[97] = 0u;
    std::string bytes(4, '\0');
    const auto size = static_cast<std::uint32_t>(units.size() * 4);
    for (int i = 0; i < 4; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xFF);
    for (const std::uint32_t u : units) {
        for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
    }
    bytes += std::string("xy\0", 3);
    const PrecompiledCharsmap map(bytes);
    const auto match = map.longest_prefix("abc");
    REQUIRE(match.has_value());
    CHECK(match->length == 1);
    CHECK(match->becomes == "xy");
    CHECK_FALSE(map.longest_prefix("b").has_value());
    NormalizedText text("cab", 0);
    map.normalize(text);
    CHECK(text.text() == "cxyb");
    CHECK(text.original_span(1, 3).begin == 1);   // "xy" stands for the "a"
    CHECK(text.original_span(1, 3).end == 2);
    CHECK_THROWS_AS(PrecompiledCharsmap(std::string("\x08\0\0\0abc", 7)), Error);
}

TEST_CASE("T5 tokenizer.json golden: a Flan-T5 folder's ids are the SentencePiece library's") {
    std::ifstream in(test::golden_dir() + "/t5_tokenizer.json");
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/t5_tokenizer.json (run tools/make_t5_tokenizer.py)");
    const nlohmann::json golden = nlohmann::json::parse(in);
    const auto folder = read_folder_tokenizer(std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/" +
                                              golden.at("folder").get<std::string>());
    REQUIRE(folder.has_value());
    CHECK(folder->files.find("tokenizer.json") != std::string::npos);
    std::size_t n = 0;
    for (const auto& c : golden.at("cases")) {
        const std::string text = c.at("text").get<std::string>();
        CAPTURE(text);
        CHECK(folder->tokenizer.encode_ids(text, true) == c.at("ids").get<std::vector<std::int32_t>>());
        ++n;
    }
    CHECK(n == 11);
}
