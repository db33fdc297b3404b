// Feeds: GPT-2's byte-level BPE files into the tokenizer pipeline
// (core/text/tokenizer/legacy_files.h), then a text. Byte 0 even: the rest is cut at
// "\n--8<--\n" into vocab.json, merges.txt and the text, read by read_gpt2_tokenizer_files;
// odd: into tokenizer.json and the text, read by read_tokenizer_json. Asserts: loading and
// encoding either throw a headscope::Error or pass check_encoding (fuzz_tokens.h); and, for
// vocab.json + merges.txt (no normalizer), tokens do not overlap and each token's span
// starts and ends with its bytes.

#include "core/text/tokenizer/byte_level.h"
#include "core/text/tokenizer/legacy_files.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "fuzz_tokens.h"

using namespace headscope;
using namespace headscope::fuzz;

namespace {

void check_exact_bytes(const tokenizer::Tokenizer& t, std::string_view text) {
    std::size_t at = 0;
    for (const tokenizer::EncodedToken& token : t.encode(text)) {
        // A gap is a byte the vocabulary has no token for (dropped, as Hugging Face's BPE
        // does without an unk_token); tokens never overlap.
        require(token.begin >= at, "token spans overlap");
        if (!token.special) {
            // A merge may join two pieces with a dropped byte between them (Hugging Face's
            // offsets then cover it too), so the span starts with the token's first byte, ends
            // with its last, and is at least as long.
            const auto bytes = tokenizer::byte_level_bytes(*t.token(token.id));
            const std::string_view span = text.substr(token.begin, token.end - token.begin);
            require(bytes.has_value() && !bytes->empty() && span.size() >= bytes->size() &&
                        span.front() == bytes->front() && span.back() == bytes->back(),
                    "a token's bytes do not match its span");
        }
        at = token.end;
    }
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const bool from_json = (in.u8() & 1) != 0;
    const std::vector<std::string_view> parts = split_parts(in.rest(), from_json ? 2 : 3);
    const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

    ScratchDir& scratch = ScratchDir::get();
    scratch.fresh();
    run_expecting_errors([&] {
        if (from_json) {
            const std::string path = scratch.file("tokenizer.json");
            write_file(path, part(0));
            check_encoding(tokenizer::read_tokenizer_json(path, ""), part(1), true);
        } else {
            const std::string vocab = scratch.file("vocab.json");
            const std::string merges = scratch.file("merges.txt");
            write_file(vocab, part(0));
            write_file(merges, part(1));
            const tokenizer::Tokenizer t = tokenizer::read_gpt2_tokenizer_files(vocab, merges);
            check_encoding(t, part(2), true);
            check_exact_bytes(t, part(2));
        }
    });
    return 0;
}
