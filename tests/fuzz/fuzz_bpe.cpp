// Feeds: GPT-2's byte-level BPE tokenizer (core/text/bpe_tokenizer.h) from files, then a text.
// Byte 0 even: the rest is cut at "\n--8<--\n" into vocab.json, merges.txt and the text,
// read by BpeTokenizer::from_files; odd: into tokenizer.json and the text, read by
// from_tokenizer_json. Asserts: loading and encoding either throw a headscope::Error or
// give tokens whose byte spans are in order, cover the text with no gap or overlap, and
// whose ids are in the vocabulary with labels; encode_ids agrees with encode; and, for
// vocab.json + merges.txt (whose only special token, <|endoftext|>, stands for its own
// bytes), each token's bytes are its span of the text and decode(encode_ids(text)) is
// the text, byte for byte.

#include "core/text/bpe_tokenizer.h"
#include "fuzz_support.h"

using namespace headscope;
using namespace headscope::fuzz;

namespace {

void check_tokens(const BpeTokenizer& tokenizer, std::string_view text, bool exact_bytes) {
    const std::vector<BpeToken> tokens = tokenizer.encode(text);
    std::size_t at = 0;
    std::vector<std::int32_t> ids;
    for (const BpeToken& t : tokens) {
        require(tokenizer.has_id(t.id), "a token id not in the vocabulary");
        require(t.label == tokenizer.label(t.id), "a token label differs from label(id)");
        require(t.begin == at && t.begin <= t.end && t.end <= text.size(), "token spans leave a gap or overlap");
        if (exact_bytes) {
            require(t.begin < t.end, "an empty token");
            const std::int32_t one[] = {t.id};
            require(tokenizer.decode(one) == text.substr(t.begin, t.end - t.begin), "a token's bytes are not its span");
        }
        at = t.end;
        ids.push_back(t.id);
    }
    require(at == text.size(), "tokens do not reach the end of the text");
    require(tokenizer.encode_ids(text) == ids, "encode_ids differs from encode");
    if (exact_bytes) require(tokenizer.decode(ids) == text, "decode(encode_ids(text)) != text");
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
            const BpeTokenizer tokenizer = BpeTokenizer::from_tokenizer_json(path);
            check_tokens(tokenizer, part(1), false);
        } else {
            const std::string vocab = scratch.file("vocab.json");
            const std::string merges = scratch.file("merges.txt");
            write_file(vocab, part(0));
            write_file(merges, part(1));
            const BpeTokenizer tokenizer = BpeTokenizer::from_files(vocab, merges);
            check_tokens(tokenizer, part(2), true);
        }
    });
    return 0;
}
