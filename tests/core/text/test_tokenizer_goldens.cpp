// The tokenizer.json reader against Hugging Face's own library: ten real tokenizers
// (Llama 3, Llama 3.1, Qwen3, Gemma 3, DeepSeek V3, gpt-oss, GPT-4o, GPT-3.5, Mistral, and
// CLIP's of openai/clip-vit-base-patch32: NFC + lower-case normalizer, Split with invert,
// BPE with "</w>", RobertaProcessing), fetched or built by tools/fetch-tokenizers.sh into the
// cache, on the hard strings of
// tests/golden/tokenizers/corpus.json. The ids, with and without special tokens, were
// written by tools/make_tokenizer_golden.mjs from npm `tokenizers` (Rust), never from here.
#include "core/base/error.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::tokenizer;
using json = nlohmann::json;

namespace {

json read_golden(const std::string& name) {
    std::ifstream in(std::string(HEADSCOPE_SOURCE_DIR) + "/tests/golden/tokenizers/" + name);
    REQUIRE_MESSAGE(in.good(), "missing tests/golden/tokenizers/" << name);
    return json::parse(in);
}

std::string models_dir() { return std::string(HEADSCOPE_TOKENIZERS_DIR) + "/models"; }

// The folder of one real tokenizer, or a failed test saying how to fetch it (never a silent pass).
std::string folder_of(const std::string& name) {
    const std::string folder = models_dir() + "/" + name;
    if (!std::filesystem::exists(folder + "/tokenizer.json")) {
        FAIL("the real tokenizers are not in " << models_dir()
                                               << ": run tools/fetch-tokenizers.sh, or configure with "
                                                  "-DHEADSCOPE_TOKENIZERS_DIR=<its folder>");
    }
    return folder;
}

// The first position where two id lists differ, for a readable failure.
std::string first_difference(const std::vector<std::int32_t>& got, const std::vector<std::int32_t>& want) {
    std::size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
    std::ostringstream out;
    out << "first difference at " << i << " of " << want.size() << " (got " << got.size() << " ids)";
    if (i < got.size()) out << ", got id " << got[i];
    if (i < want.size()) out << ", want id " << want[i];
    return out.str();
}

void check_tokenizer(const std::string& name) {
    const json corpus = read_golden("corpus.json").at("cases");
    const json golden = read_golden(name + ".json");
    const auto folder = read_folder_tokenizer(folder_of(name));
    REQUIRE(folder.has_value());
    const Tokenizer& tokenizer = folder->tokenizer;
    for (const auto& entry : golden.at("cases").items()) {
        // Named copies: doctest's messages capture them in lambdas, which clang 14 refuses for bindings.
        const std::string case_name = entry.key();
        const json& expected = entry.value();
        const std::string text = corpus.at(case_name).get<std::string>();
        const auto want = expected.at("ids").get<std::vector<std::int32_t>>();
        const auto want_plain = expected.at("ids_no_special").get<std::vector<std::int32_t>>();
        const auto got = tokenizer.encode_ids(text, true);
        const auto got_plain = tokenizer.encode_ids(text, false);
        CHECK_MESSAGE(got == want, name << " / " << case_name << ": " << first_difference(got, want));
        CHECK_MESSAGE(got_plain == want_plain,
                      name << " / " << case_name << " (no special): " << first_difference(got_plain, want_plain));
    }
}

}   // namespace

TEST_CASE("tokenizer.json golden: Llama 3") { check_tokenizer("llama3"); }
TEST_CASE("tokenizer.json golden: Llama 3.1") { check_tokenizer("llama3_1"); }
TEST_CASE("tokenizer.json golden: Qwen3") { check_tokenizer("qwen3"); }
TEST_CASE("tokenizer.json golden: Gemma 3") { check_tokenizer("gemma3"); }
TEST_CASE("tokenizer.json golden: DeepSeek V3") { check_tokenizer("deepseek_v3"); }
TEST_CASE("tokenizer.json golden: gpt-oss") { check_tokenizer("gptoss"); }
TEST_CASE("tokenizer.json golden: GPT-4o") { check_tokenizer("gpt4o"); }
TEST_CASE("tokenizer.json golden: GPT-3.5") { check_tokenizer("gpt35turbo"); }
TEST_CASE("tokenizer.json golden: Mistral") { check_tokenizer("mistral"); }
TEST_CASE("tokenizer.json golden: CLIP") { check_tokenizer("clip"); }
