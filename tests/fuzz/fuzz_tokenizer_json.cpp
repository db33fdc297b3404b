// Feeds: tokenizer.json (and tokenizer_config.json) into the tokenizer pipeline
// (core/text/tokenizer/tokenizer_folder.h), every component type reachable: the input after
// byte 0 is cut at "\n--8<--\n" into tokenizer.json, a text and, when there, a
// tokenizer_config.json. Byte 0 bit 0 chooses add_special_tokens. Asserts: a
// headscope::Error (bad JSON, unknown types, bad regexes, merges naming missing tokens,
// colliding ids), or check_encoding (fuzz_tokens.h).

#include "core/text/tokenizer/tokenizer_folder.h"
#include "fuzz_tokens.h"

using namespace headscope;
using namespace headscope::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const bool special = (in.u8() & 1) != 0;
    const std::vector<std::string_view> parts = split_parts(in.rest(), 3);
    const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

    ScratchDir& scratch = ScratchDir::get();
    scratch.fresh();
    run_expecting_errors([&] {
        const std::string path = scratch.file("tokenizer.json");
        write_file(path, part(0));
        std::string config;
        if (parts.size() > 2) {
            config = scratch.file("tokenizer_config.json");
            write_file(config, part(2));
        }
        check_encoding(tokenizer::read_tokenizer_json(path, config), part(1), special);
    });
    return 0;
}
