// The tokenizer.json pipeline's parts on cases worked by hand from Hugging Face's Rust
// sources (tokenizers/src: added_vocabulary.rs, normalizer.rs, pre_tokenizers/*.rs,
// processors/*.rs, decoders/*.rs): what the nine real files of test_tokenizer_goldens.cpp
// leave unexercised (lstrip, rstrip, single_word, each split behaviour, Metaspace's
// prepend schemes, the decoders' labels) and the JSON reader underneath.
#include "core/base/error.h"
#include "core/base/json_file.h"
#include "core/text/tokenizer/split_pattern.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::tokenizer;
using json = nlohmann::json;
using headscope::test::TempDir;
using headscope::test::write_bytes;

namespace {

using Ids = std::vector<std::int32_t>;
using Strings = std::vector<std::string>;

// A character-level BPE (no merges) over these tokens, ids in order, plus the given parts.
json char_tokenizer(const Strings& tokens, json parts = json::object()) {
    json vocab = json::object();
    for (std::size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = i;
    json root = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
    for (const auto& [key, value] : parts.items()) root[key] = value;
    return root;
}

Tokenizer read(const json& root) { return Tokenizer::read_json(root, "tokenizer.json"); }

json added(int id, const std::string& content, json flags = json::object()) {
    json token = {{"id", id}, {"content", content}, {"special", false}, {"normalized", false}};
    for (const auto& [key, value] : flags.items()) token[key] = value;
    return token;
}

Strings pieces_of(const std::string& text, SplitBehavior behavior, bool invert = false) {
    Strings out;
    const auto stretches = SplitPattern::literal("-").stretches(text);
    for (const auto& piece : split_text(NormalizedText(text, 0), stretches, behavior, invert))
        out.push_back(piece.text());
    return out;
}

}   // namespace

TEST_CASE("pipeline: added tokens strip, stay single words, and match before or after normalizing") {
    const Strings chars = {"a", "b", " ", "c", ".", "h", "i"};
    // lstrip / rstrip take the spaces beside the token into it.
    auto root = char_tokenizer(chars, {{"added_tokens", json::array({added(50, "<m>")})}});
    CHECK(read(root).encode_ids("a <m> b") == Ids{0, 2, 50, 2, 1});
    root["added_tokens"] = json::array({added(50, "<m>", {{"lstrip", true}, {"rstrip", true}})});
    const auto stripped = read(root).encode("a  <m> b");
    CHECK(stripped.size() == 3);
    CHECK(stripped[1].id == 50);
    CHECK(stripped[1].begin == 1);   // "  <m> "
    CHECK(stripped[1].end == 7);
    // single_word: only between non-word characters; "cab" keeps its "ab" as letters.
    root["added_tokens"] = json::array({added(51, "ab", {{"single_word", true}})});
    CHECK(read(root).encode_ids("ab cab ab.") == Ids{51, 2, 3, 0, 1, 2, 51, 4});
    // Leftmost first, and the longest of those starting there.
    root["added_tokens"] = json::array({added(52, "<a>"), added(53, "<a><b>")});
    CHECK(read(root).encode_ids("<a><b><a>") == Ids{53, 52});
    // normalized = true matches the normalized text; false only the text as typed.
    auto lower = char_tokenizer(
        chars, {{"normalizer", {{"type", "Lowercase"}}},
                {"added_tokens", json::array({added(54, "HI"), added(55, "ab", {{"normalized", true}})})}});
    CHECK(read(lower).encode_ids("HI hi AB") == Ids{54, 2, 5, 6, 2, 55});
    // A special token typed in the text is that token, with or without special tokens added.
    root["added_tokens"] = json::array({added(56, "<s>", {{"special", true}})});
    CHECK(read(root).encode("a<s>", false).back().special);
}

TEST_CASE("pipeline: normalizers rewrite the text and keep each character's span") {
    const Strings chars = {"f", "i", "A", "1", "a", "b", "\xE2\x96\x81", "\xCC\x87"};
    // NFKC: the ﬁ ligature is "fi", a full-width A and 1 are ASCII.
    const auto nfkc = read(char_tokenizer(chars, {{"normalizer", {{"type", "NFKC"}}}}));
    const auto fi = nfkc.encode("\xEF\xAC\x81\xEF\xBC\xA1\xEF\xBC\x91");
    CHECK(fi.size() == 4);
    CHECK(fi[0].id == 0);
    CHECK(fi[1].id == 1);
    CHECK(fi[0].begin == 0);   // both letters come from the ligature's 3 bytes
    CHECK(fi[1].end == 3);
    CHECK(fi[3].begin == 6);
    // Strip, then Replace " " with "▁" and Prepend "▁" (Llama 2's normalizer).
    const json llama2 = {{"type", "Sequence"},
                         {"normalizers",
                          {{{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}},
                           {{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                           {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}};
    const auto t = read(char_tokenizer(chars, {{"normalizer", llama2}}));
    const auto ab = t.encode("  a b ");
    CHECK(ab.size() == 4);
    CHECK(t.encode_ids("  a b ") == Ids{6, 4, 6, 5});
    CHECK(ab[0].begin == 2);   // the prepended ▁ stands for nothing typed
    CHECK(ab[0].end == 2);
    CHECK(ab[2].begin == 3);   // the replaced space is the space typed
    CHECK(ab[2].end == 4);
    // Lowercase as Rust's char::to_lowercase: İ is "i" + U+0307.
    CHECK(read(char_tokenizer(chars, {{"normalizer", {{"type", "Lowercase"}}}})).encode_ids("\xC4\xB0") == Ids{1, 7});
    // A Regex Replace, and an empty text stays empty (Prepend adds nothing to nothing).
    const json runs = {{"type", "Replace"}, {"pattern", {{"Regex", "a+"}}}, {"content", "b"}};
    CHECK(read(char_tokenizer(chars, {{"normalizer", runs}})).encode_ids("aaab") == Ids{5, 5});
    CHECK(t.encode_ids("").empty());
}

TEST_CASE("pipeline: split behaviours, as NormalizedString::split") {
    CHECK(pieces_of("a-b--c", SplitBehavior::isolated) == Strings{"a", "-", "b", "-", "-", "c"});
    CHECK(pieces_of("a-b--c", SplitBehavior::removed) == Strings{"a", "b", "c"});
    CHECK(pieces_of("a-b--c", SplitBehavior::merged_with_previous) == Strings{"a-", "b-", "-", "c"});
    CHECK(pieces_of("a-b--c", SplitBehavior::merged_with_next) == Strings{"a", "-b", "-", "-c"});
    CHECK(pieces_of("a-b--c", SplitBehavior::contiguous) == Strings{"a", "-", "b", "--", "c"});
    CHECK(pieces_of("a-b--c", SplitBehavior::removed, true) == Strings{"-", "-", "-"});
    CHECK(pieces_of("", SplitBehavior::isolated).empty());
}

TEST_CASE("pipeline: pre-tokenizers") {
    const Strings chars = {"1",
                           "2",
                           "3",
                           "12",
                           "123",
                           "a",
                           ",",
                           "\xE2\x96\x81",
                           "\xE2\x96\x81"
                           "a",
                           "<s>"};
    const auto with = [&](const json& pre, const json& merges = json::array()) {
        json root = char_tokenizer(chars, {{"pre_tokenizer", pre}, {"added_tokens", json::array({added(9, "<s>")})}});
        root["model"]["merges"] = merges;
        root["model"]["ignore_merges"] = true;   // a piece in the vocabulary is one token
        return read(root);
    };
    // Digits: one piece per digit, or runs of digits.
    CHECK(with({{"type", "Digits"}, {"individual_digits", true}}).encode_ids("123") == Ids{0, 1, 2});
    CHECK(with({{"type", "Digits"}, {"individual_digits", false}}).encode_ids("123a") == Ids{4, 5});
    // Punctuation isolated; Whitespace keeps \w+ and [^\w\s]+ runs.
    CHECK(with({{"type", "Punctuation"}}).encode_ids("12,a") == Ids{3, 6, 5});
    CHECK(with({{"type", "Whitespace"}}).encode_ids("12 ,,a") == Ids{3, 6, 6, 5});
    // Metaspace: spaces to ▁, split before each; "first" prepends only where the text
    // starts (not after an added token), "always" before every piece, "never" nowhere.
    const auto metaspace = [&](const char* scheme) {
        return with(
            {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", scheme}, {"split", true}});
    };
    CHECK(metaspace("first").encode_ids("a a") == Ids{8, 8});
    CHECK(metaspace("first").encode_ids("<s>a") == Ids{9, 5});
    CHECK(metaspace("always").encode_ids("<s>a") == Ids{9, 8});
    CHECK(metaspace("never").encode_ids("a a") == Ids{5, 8});
    // ByteLevel without its regex: bytes to characters only.
    CHECK(with({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}).encode_ids("12") == Ids{3});
}

TEST_CASE("pipeline: post-processors add the special tokens a model expects") {
    const Strings chars = {"<s>", "</s>", "a", "[CLS]", "[SEP]"};
    auto root = char_tokenizer(
        chars,
        {{"added_tokens", json::array({added(0, "<s>", {{"special", true}}), added(1, "</s>", {{"special", true}})})}});
    root["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}}},
        {"special_tokens",
         {{"<s>", {{"id", "<s>"}, {"ids", json::array({0})}, {"tokens", json::array({"<s>"})}}},
          {"</s>", {{"id", "</s>"}, {"ids", json::array({1, 1})}, {"tokens", json::array({"</s>", "</s>"})}}}}}};
    const auto t = read(root);
    const auto tokens = t.encode("aa");
    CHECK(t.encode_ids("aa") == Ids{0, 2, 2, 1, 1});
    CHECK(tokens.front().special);
    CHECK(tokens.back().begin == 2);   // after the text, empty
    CHECK(t.encode_ids("aa", false) == Ids{2, 2});
    CHECK(t.encode_ids("") == Ids{0, 1, 1});
    root["post_processor"] = {{"type", "Sequence"},
                              {"processors",
                               {{{"type", "ByteLevel"}, {"trim_offsets", true}},
                                {{"type", "RobertaProcessing"}, {"sep", {"[SEP]", 4}}, {"cls", {"[CLS]", 3}}}}}};
    CHECK(read(root).encode_ids("a") == Ids{3, 2, 4});
    // An id no token has is refused where it is written, not encoded into a map without a row.
    root["post_processor"]["processors"][1]["sep"] = {"[SEP]", 9};
    CHECK_THROWS_WITH_AS(read(root), "tokenizer.json: post_processor.processors[1].sep: id 9 is not in the vocabulary",
                         Error);
    root["post_processor"] = {{"type", "TemplateProcessing"},
                              {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}}},
                              {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", json::array({7})}}}}}};
    CHECK_THROWS_WITH_AS(read(root),
                         "tokenizer.json: post_processor.special_tokens.<s>.ids: id 7 is not in the vocabulary", Error);
}

TEST_CASE("pipeline: transformers' Llama and Gemma classes take BOS / EOS from tokenizer_config.json") {
    TempDir dir;
    const Strings chars = {"<s>", "</s>", "a"};
    write_bytes(dir.file("tokenizer.json"),
                char_tokenizer(chars, {{"added_tokens",
                                        {added(0, "<s>", {{"special", true}}), added(1, "</s>", {{"special", true}})}}})
                    .dump());
    const auto with_config = [&](const json& config) {
        write_bytes(dir.file("tokenizer_config.json"), config.dump());
        return read_tokenizer_json(dir.file("tokenizer.json"), dir.file("tokenizer_config.json")).encode_ids("a");
    };
    CHECK(with_config({{"tokenizer_class", "LlamaTokenizerFast"}, {"bos_token", "<s>"}}) == Ids{0, 2});
    CHECK(with_config({{"tokenizer_class", "GemmaTokenizer"},
                       {"add_bos_token", false},
                       {"add_eos_token", true},
                       {"eos_token", {{"content", "</s>"}, {"special", true}}}}) == Ids{2, 1});
    // Other classes keep the file's post-processor (here none).
    CHECK(with_config({{"tokenizer_class", "PreTrainedTokenizerFast"}, {"add_bos_token", true}}) == Ids{2});
    write_bytes(dir.file("tokenizer_config.json"), json({{"tokenizer_class", "LlamaTokenizer"}}).dump());
    CHECK_THROWS_WITH_AS(
        read_tokenizer_json(dir.file("tokenizer.json"), dir.file("tokenizer_config.json")),
        (dir.file("tokenizer_config.json") + ": the top level: bos_token is missing, and add_bos_token asks for it")
            .c_str(),
        Error);
}

TEST_CASE("pipeline: decoders make the labels people read") {
    const Strings tokens = {"<0xE2>", "<0x80>", "<0x99>", "\xE2\x96\x81hi", "x", "##y"};
    const json llama2_decoder = {{"type", "Sequence"},
                                 {"decoders",
                                  {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                                   {{"type", "ByteFallback"}},
                                   {{"type", "Fuse"}},
                                   {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
    const auto t = read(char_tokenizer(tokens, {{"decoder", llama2_decoder}}));
    // A run of byte tokens spelling one character shows it at each position.
    CHECK(t.labels(Ids{3, 0, 1, 2}) == Strings{" hi", "\xE2\x80\x99", "\xE2\x80\x99", "\xE2\x80\x99"});
    CHECK(t.labels(Ids{0, 4}) == Strings{"\\xe2", "x"});    // a run that spells nothing: its byte
    CHECK(t.decode(Ids{3, 0, 1, 2}) == "hi\xE2\x80\x99");   // Strip after Fuse: the text's first space
    CHECK(t.decode(Ids{0, 4}) == "\xEF\xBF\xBDx");          // an invalid byte decodes to U+FFFD
    // WordPiece labels keep the vocabulary's form; decoding joins the ## pieces.
    const auto wp = read(char_tokenizer(tokens, {{"decoder", {{"type", "WordPiece"}, {"prefix", "##"}}}}));
    CHECK(wp.labels(Ids{4, 5}) == Strings{"x", "##y"});
    CHECK(wp.decode(Ids{4, 5, 4}) == "xy x");
}

TEST_CASE("pipeline: BPE holds an unknown back past byte-fallback tokens, as tokenizers 0.23 does") {
    // bpe/model.rs merge_word: an unknown character waits (to be fused) until the next known
    // one, while byte tokens go out at once; tokenizers 0.23.2 gives ids [1, 2, 0, 3, 1, 2]
    // for this text. The spans stay each token's own bytes, so the held unknown starts first.
    json root = char_tokenizer({"<unk>", "<0xC3>", "<0xA9>", "a"});
    root["model"]["unk_token"] = "<unk>";
    root["model"]["fuse_unk"] = true;
    root["model"]["byte_fallback"] = true;
    const std::string text = "\n\xC3\xA9"
                             "a\xC3\xA9";
    const auto tokens = read(root).encode(text, false);
    Ids ids;
    for (const auto& token : tokens) ids.push_back(token.id);
    CHECK(ids == Ids{1, 2, 0, 3, 1, 2});
    REQUIRE(tokens.size() == 6);
    const EncodedToken unknown = tokens[2];
    CHECK(unknown.begin == 0);
    CHECK(unknown.end == 1);
    CHECK(tokens[0].begin == 1);
}

TEST_CASE("pipeline: a text past a megabyte that certainly makes too many tokens is refused before BPE") {
    // Each token covers at most the longest entry's bytes (4 here): 2 MiB of one word makes
    // at least 524,288 tokens, whatever the merges do.
    json root = char_tokenizer({"a", "aa", "aaaa"});
    root["model"]["merges"] = json::array({"a a", "aa aa"});
    const auto t = read(root);
    const std::string word(std::size_t{2} << 20, 'a');
    try {
        (void)t.encode(word, false, "text", 100);
        FAIL("expected TooManyTokens");
    } catch (const TooManyTokens& e) {
        CHECK(e.at_least == 524288);
        CHECK(std::string(e.what()) == "text: at least 524288 tokens, more than 100");
    }
    CHECK(t.encode(word, false, "text", 524288).size() == 524288);             // the bound is exact here
    CHECK(t.encode(std::string(1000, 'a'), false, "text", 1).size() == 250);   // small: counted, not refused
}

TEST_CASE("json_file: one linear pass that refuses what nlohmann would accept") {
    const auto error_of = [](std::string_view text, const JsonLimits& limits = {}) -> std::string {
        try {
            (void)parse_json_text(text, "f.json", limits);
        } catch (const Error& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK(error_of(std::string_view("{\"a\": 1}\0 garbage", 17)) ==
          "f.json: NUL byte at offset 8 (JSON text has none)");
    CHECK(error_of(std::string_view("{\"a\": \"x\0y\"}", 12)) == "f.json: NUL byte at offset 8 (JSON text has none)");
    CHECK(error_of("{\"a\": {\"b\": 1, \"b\": 2}}") == "f.json: key \"b\" is given twice in a");
    CHECK(error_of("{\"a\": [0, {\"c\": 1, \"c\": 1}]}") == "f.json: key \"c\" is given twice in a[1]");
    CHECK(error_of("{} {}").starts_with("f.json: not valid JSON (parse error at line 1, column 4: syntax error"));
    JsonLimits small;
    small.max_depth = 3;
    small.max_entries = 3;
    CHECK(error_of("[[[[]]]]", small) == "f.json: JSON nests deeper than 3 levels");
    CHECK(error_of("{\"v\": [1, 2, 3, 4]}", small) == "f.json: v has more than 3 entries");
    // 400,000 empty objects: linear (the old callback parser rescanned and took minutes).
    std::string many = "{\"x\": [";
    for (int i = 0; i < 400000; ++i) many += i == 0 ? "{}" : ",{}";
    many += "]}";
    CHECK(parse_json_text(many, "many.json").at("x").size() == 400000);

    // A streamed container hands its entries over in order and stays empty in the DOM.
    std::vector<std::string> seen;
    const std::vector<JsonStream> streams = {
        {"m.v", [&](JsonEntry&& e) { seen.push_back(e.key + "=" + e.value.dump()); }},
        {"m.l", [&](JsonEntry&& e) { seen.push_back(std::to_string(e.index) + ":" + e.value.dump()); }}};
    const json root = parse_json_text(R"({"m": {"v": {"a": 1, "b": [2]}, "l": ["x", ["y", "z"]], "k": 3}})", "s.json",
                                      JsonLimits{}, streams);
    CHECK(seen == Strings{"a=1", "b=[2]", "0:\"x\"", "1:[\"y\",\"z\"]"});
    CHECK(root.at("m").at("v").empty());
    CHECK(root.at("m").at("k") == 3);
}
