// headscope-cli tokenize, as a user runs it, on the nine real tokenizers that
// tools/fetch-tokenizers.sh caches: the ids of Hugging Face's own library
// (tests/golden/tokenizers, from tools/make_tokenizer_golden.mjs) with and without special
// tokens, on the empty text and typed special tokens, and "tokens" the
// vocabulary's strings of those ids as tokenizer.json itself writes them.
#include "cli_runner.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace headscope::test;
using json = nlohmann::json;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;

json read_json(const std::string& path) {
    std::ifstream in(path);
    REQUIRE_MESSAGE(in.good(), "missing " << path);
    return json::parse(in);
}

// id -> string, from tokenizer.json's model.vocab and added_tokens, read here directly.
std::map<std::int64_t, std::string> vocabulary_of(const std::string& tokenizer_json) {
    const json root = read_json(tokenizer_json);
    std::map<std::int64_t, std::string> tokens;
    for (const auto& [token, id] : root.at("model").at("vocab").items()) tokens[id.get<std::int64_t>()] = token;
    for (const auto& added : root.at("added_tokens")) {
        tokens[added.at("id").get<std::int64_t>()] = added.at("content").get<std::string>();
    }
    return tokens;
}

void check_tokenizer(const std::string& name) {
    const std::string folder = std::string(HEADSCOPE_TOKENIZERS_DIR) + "/models/" + name;
    if (!std::filesystem::exists(folder + "/tokenizer.json")) {
        FAIL("the real tokenizers are not in " << HEADSCOPE_TOKENIZERS_DIR << ": run tools/fetch-tokenizers.sh");
    }
    const json corpus = read_json(source_dir + "/tests/golden/tokenizers/corpus.json").at("cases");
    const json golden = read_json(source_dir + "/tests/golden/tokenizers/" + name + ".json").at("cases");
    const auto vocabulary = vocabulary_of(folder + "/tokenizer.json");
    TempDir dir;
    // Three runs per tokenizer (each loads it: Gemma 3's is 33 MB): the in-process golden
    // test covers every string; this covers the command.
    const std::vector<std::pair<std::string, bool>> runs = {
        {"empty", true}, {"special_tokens_typed", true}, {"special_tokens_typed", false}};
    for (const auto& run : runs) {
        // Named copies: doctest's messages capture them in lambdas, which clang 14 refuses for bindings.
        const std::string case_name = run.first;
        const bool special = run.second;
        const std::string text_file = dir.file(case_name + ".txt");
        // --text-file drops one final line end; a second one keeps the text's own.
        std::string text = corpus.at(case_name).get<std::string>();
        write_bytes(text_file, text.ends_with('\n') ? text + "\n" : text);
        {
            std::vector<std::string> args = {"tokenize", "--model", folder, "--text-file", text_file};
            if (!special) args.push_back("--no-special");
            const RunResult r = run_cli(args);
            INFO(name << " / " << case_name << (special ? "" : " --no-special") << ": " << r.err);
            REQUIRE(r.exit_code == 0);
            CHECK(r.err.empty());
            CHECK(count_lines(r.out) == 1);
            const json out = json::parse(r.out);
            const auto ids = out.at("ids").get<std::vector<std::int64_t>>();
            CHECK(ids == golden.at(case_name).at(special ? "ids" : "ids_no_special").get<std::vector<std::int64_t>>());
            const auto tokens = out.at("tokens").get<std::vector<std::string>>();
            REQUIRE(tokens.size() == ids.size());
            for (std::size_t i = 0; i < ids.size(); ++i) CHECK(tokens[i] == vocabulary.at(ids[i]));
        }
    }
}

}   // namespace

TEST_CASE("tokenize: Llama 3") { check_tokenizer("llama3"); }
TEST_CASE("tokenize: Llama 3.1") { check_tokenizer("llama3_1"); }
TEST_CASE("tokenize: Qwen3") { check_tokenizer("qwen3"); }
TEST_CASE("tokenize: Gemma 3") { check_tokenizer("gemma3"); }
TEST_CASE("tokenize: DeepSeek V3") { check_tokenizer("deepseek_v3"); }
TEST_CASE("tokenize: gpt-oss") { check_tokenizer("gptoss"); }
TEST_CASE("tokenize: GPT-4o") { check_tokenizer("gpt4o"); }
TEST_CASE("tokenize: CLIP") { check_tokenizer("clip"); }
TEST_CASE("tokenize: GPT-3.5") { check_tokenizer("gpt35turbo"); }
TEST_CASE("tokenize: Mistral") { check_tokenizer("mistral"); }

TEST_CASE("tokenize: GPT-2 and BERT folders, and --text") {
    const std::string checkpoints = source_dir + "/tests/checkpoints";
    RunResult r = run_cli({"tokenize", "--model", checkpoints + "/bert_tiny", "--text", "the cat"});
    REQUIRE(r.exit_code == 0);
    const json bert = json::parse(r.out);
    CHECK(bert.at("tokens").front() == "[CLS]");
    CHECK(bert.at("tokens").back() == "[SEP]");
    r = run_cli({"tokenize", "--model", checkpoints + "/gpt2_tiny", "--text", "", "--no-special"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "{\"ids\":[],\"tokens\":[]}\n");
}
