// Feeds: the built-in text model's tokenizer and input path (core/text/text.h tokenize_words,
// the UTF-8 check, split_on_specials; builtin:toy-text's encode_text and forward). Byte 0
// picks the model (structured or random heads) and the run (causal, ablated head, all
// stages); the rest is the sentence. Asserts: invalid UTF-8 is refused by both
// validate_utf8 and tokenize_words, or by neither; tokens are non-empty, in order, not
// overlapping, inside the text and equal to their span's bytes, and never start with
// whitespace; split_on_specials covers the text in order; and a sentence the model takes
// gives finite maps whose rows sum to 1, masked pairs 0 (fuzz_model.h).

#include "core/base/error.h"
#include "core/models/toy/toy_models.h"
#include "core/text/text.h"
#include "fuzz_model.h"
#include "fuzz_support.h"

using namespace headscope;
using namespace headscope::fuzz;

namespace {

// Smaller than the default (E = 64, 512 tokens) so that thousands of sentences a second
// run; a longer sentence is refused after it has been tokenized.
ToyConfig small_config(ToyInit init) {
    ToyConfig config;
    config.width = 32;
    config.n_layers = 1;
    config.mlp_ratio = 1;
    config.max_tokens = 128;
    config.init = init;
    config.seed = 7;
    return config;
}

const Model& toy_text(bool random) {
    static const std::unique_ptr<Model> structured = make_toy_text(small_config(ToyInit::structured));
    static const std::unique_ptr<Model> random_heads = make_toy_text(small_config(ToyInit::random));
    return random ? *random_heads : *structured;
}

bool valid_utf8(std::string_view text) {
    try {
        validate_utf8(text, "text");
        return true;
    } catch (const Error&) {
        return false;
    }
}

void check_words(std::string_view text) {
    const bool valid = valid_utf8(text);
    std::vector<TextToken> tokens;
    try {
        tokens = tokenize_words(text, "text");
    } catch (const Error&) {
        require(!valid, "tokenize_words refused valid UTF-8");
        return;
    }
    require(valid, "tokenize_words took invalid UTF-8");
    std::size_t at = 0;
    for (const TextToken& t : tokens) {
        require(t.begin >= at && t.begin < t.end && t.end <= text.size(), "word spans empty, overlapping or outside");
        require(t.text == text.substr(t.begin, t.end - t.begin), "a word's text is not its span");
        require(t.text[0] != ' ' && t.text[0] != '\t' && t.text[0] != '\n', "a word starts with whitespace");
        at = t.end;
    }
}

void check_specials(std::string_view text) {
    static const std::vector<SpecialToken> specials = {{"<|endoftext|>", 0}, {"[SEP]", 1}, {"[", 2}};
    std::size_t at = 0;
    split_on_specials(
        text, specials,
        [&](std::size_t begin, std::size_t end) {
            require(begin == at && begin <= end && end <= text.size(), "split_on_specials text out of order");
            at = end;
        },
        [&](const SpecialToken& special, std::size_t begin) {
            require(begin == at && text.substr(begin, special.first.size()) == special.first,
                    "a special not at its place");
            at = begin + special.first.size();
        });
    require(at == text.size(), "split_on_specials stopped short of the end");
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const std::uint8_t flags = in.u8();
    const std::string_view text = in.rest();
    check_words(text);
    check_specials(text);

    const Model& model = toy_text((flags & 1) != 0);
    run_expecting_errors([&] {
        const ModelInput input = model.encode_text(text);
        RunOptions options;
        if (flags & 2) options.causal = true;
        if (flags & 4) options.detail = TraceDetail::all_stages;
        if (flags & 8) {
            const ModelInfo& info = model.info();
            options.disabled_heads = HeadMask(info.n_layers, info.n_heads);
            options.disabled_heads.set(info.n_layers - 1, static_cast<Eigen::Index>(flags >> 4) % info.n_heads);
        }
        check_trace(model.info(), input, model.forward(input, options), true);
    });
    return 0;
}
