// Feeds: text to real tokenizers (tools/fetch-tokenizers.sh puts them in the cache; the
// target refuses to start without them). Byte 0 picks the tokenizer and add_special_tokens:
// Mistral (Metaspace, byte fallback), Llama 3 (Split regex, ignore_merges), Qwen3 (NFC,
// Split) or GPT-4o (inverted Split); the rest is the text. Asserts: a headscope::Error
// (invalid UTF-8), or check_encoding (fuzz_tokens.h).

#include "core/text/tokenizer/tokenizer_folder.h"
#include "fuzz_tokens.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace headscope;
using namespace headscope::fuzz;

namespace {

const tokenizer::Tokenizer& real_tokenizer(std::size_t which) {
    static const std::array<const char*, 4> names = {"mistral", "llama3", "qwen3", "gpt4o"};
    static std::array<std::unique_ptr<tokenizer::Tokenizer>, 4> loaded;
    if (!loaded[which]) {
        const std::string folder = std::string(HEADSCOPE_TOKENIZERS_DIR) + "/models/" + names[which];
        try {
            auto found = tokenizer::read_folder_tokenizer(folder);
            if (!found) throw Error(folder + ": no tokenizer there");
            loaded[which] = std::make_unique<tokenizer::Tokenizer>(std::move(found->tokenizer));
        } catch (const Error& e) {
            std::fprintf(stderr, "fuzz_tokenize_real: %s (run tools/fetch-tokenizers.sh)\n", e.what());
            std::abort();
        }
    }
    return *loaded[which];
}

}   // namespace

// All four loaded before the first input: loading is seconds under the sanitizers, and the
// fuzz run allows one second per input.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    for (std::size_t which = 0; which < 4; ++which) (void)real_tokenizer(which);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const std::uint8_t choice = in.u8();
    const tokenizer::Tokenizer& t = real_tokenizer(choice % 4);
    const std::string_view text = in.rest();
    run_expecting_errors([&] { check_encoding(t, text, (choice & 4) != 0); });
    return 0;
}
