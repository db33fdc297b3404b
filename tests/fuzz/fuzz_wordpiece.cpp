// Feeds: BERT's WordPiece tokenizer (core/text/wordpiece_tokenizer.h): the input after byte 0
// is cut at "\n--8<--\n" into vocab.txt, a text, a second text (the pair) and a
// tokenizer_config.json. The options come from that tokenizer_config.json when the part
// is there (read_hf_bert_tokenizer_config, as the BERT loader reads it), else from byte 0
// (lower-casing, accent stripping unset / on / off, CJK splitting). Asserts: a
// headscope::Error, or [CLS] ... [SEP] (... [SEP]) with type ids 0 then 1, every id in
// the vocabulary and labelled by its own token, byte spans inside their own text and in
// order, and decode() of the ids not throwing.

#include "core/models/hf/bert.h"
#include "core/text/wordpiece_tokenizer.h"
#include "fuzz_support.h"

using namespace headscope;
using namespace headscope::fuzz;

namespace {

void check_spans(const std::vector<WordPieceToken>& tokens, std::size_t first, std::size_t last, std::size_t size) {
    std::size_t previous = 0;
    for (std::size_t i = first; i < last; ++i) {
        const WordPieceToken& t = tokens[i];
        require(t.begin <= t.end && t.end <= size, "a token span outside its text");
        require(t.begin >= previous, "token spans out of order");
        previous = t.begin;
    }
}

void check_encoding(const WordPieceTokenizer& tokenizer, std::string_view text, std::string_view pair) {
    const std::vector<WordPieceToken> one = tokenizer.encode(text);
    require(one.size() >= 2 && one.front().id == tokenizer.cls_id() && one.back().id == tokenizer.sep_id(),
            "encode() is not [CLS] ... [SEP]");
    check_spans(one, 1, one.size() - 1, text.size());

    const std::vector<WordPieceToken> two = tokenizer.encode_pair(text, pair);
    require(two.size() >= one.size() + 1 && two.back().id == tokenizer.sep_id(), "encode_pair() does not end in [SEP]");
    std::vector<std::int32_t> ids;
    for (std::size_t i = 0; i < two.size(); ++i) {
        const WordPieceToken& t = two[i];
        require(t.id >= 0 && static_cast<std::size_t>(t.id) < tokenizer.vocab_size(), "an id outside the vocabulary");
        require(t.label == tokenizer.token(t.id), "a label differs from token(id)");
        require(t.type_id == (i < one.size() ? 0 : 1), "type ids are not 0 ... 0 1 ... 1");
        ids.push_back(t.id);
    }
    check_spans(two, one.size(), two.size() - 1, pair.size());
    (void)tokenizer.decode(ids);
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const std::uint8_t flags = in.u8();
    const std::vector<std::string_view> parts = split_parts(in.rest(), 4);
    const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

    ScratchDir& scratch = ScratchDir::get();
    scratch.fresh();
    run_expecting_errors([&] {
        WordPieceOptions options;
        if (parts.size() > 3) {
            const std::string config = scratch.file("tokenizer_config.json");
            write_file(config, part(3));
            options = read_hf_bert_tokenizer_config(config);
        } else {
            options.do_lower_case = (flags & 1) != 0;
            if (flags & 2) options.strip_accents = (flags & 4) != 0;
            options.tokenize_chinese_chars = (flags & 8) == 0;
        }
        const std::string vocab = scratch.file("vocab.txt");
        write_file(vocab, part(0));
        const WordPieceTokenizer tokenizer = WordPieceTokenizer::from_file(vocab, options);
        check_encoding(tokenizer, part(1), part(2));
    });
    return 0;
}
