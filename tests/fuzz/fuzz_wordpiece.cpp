// Feeds: BERT's vocab.txt (+ tokenizer_config.json) into the tokenizer pipeline
// (read_bert_vocab, as BertTokenizerFast): the input after byte 0 is cut at "\n--8<--\n"
// into vocab.txt, a text, a second text and a tokenizer_config.json (when that part is
// there). Asserts: a headscope::Error, or check_encoding (fuzz_tokens.h) on both texts,
// with [CLS] first and [SEP] last when special tokens are added.

#include "core/text/tokenizer/legacy_files.h"
#include "fuzz_tokens.h"

using namespace headscope;
using namespace headscope::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    (void)in.u8();
    const std::vector<std::string_view> parts = split_parts(in.rest(), 4);
    const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

    ScratchDir& scratch = ScratchDir::get();
    scratch.fresh();
    run_expecting_errors([&] {
        std::string config;
        if (parts.size() > 3) {
            config = scratch.file("tokenizer_config.json");
            write_file(config, part(3));
        }
        const std::string vocab = scratch.file("vocab.txt");
        write_file(vocab, part(0));
        const tokenizer::Tokenizer t = tokenizer::read_bert_vocab(vocab, config);
        const std::vector<std::int32_t> ids = check_encoding(t, part(1), true);
        require(ids.size() >= 2 && ids.front() == t.find("[CLS]") && ids.back() == t.find("[SEP]"),
                "encode() is not [CLS] ... [SEP]");
        check_encoding(t, part(2), false);
    });
    return 0;
}
