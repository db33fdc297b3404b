#pragma once
// A Hugging Face tokenizer: the pipeline tokenizer.json describes, run as the Rust
// `tokenizers` library runs it, so the ids are the ones the model was trained on.
//   added tokens found -> normalizer -> pre-tokenizer -> model -> post-processor
// and a decoder for the labels people read. Every token keeps the byte span of the input
// it came from.

#include "core/base/error.h"
#include "core/text/tokenizer/added_tokens.h"
#include "core/text/tokenizer/decoders.h"
#include "core/text/tokenizer/normalizers.h"
#include "core/text/tokenizer/post_processors.h"
#include "core/text/tokenizer/pre_tokenizers.h"
#include "core/text/tokenizer/token_model.h"

#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::tokenizer {

struct TokenizerParts {
    std::unique_ptr<Normalizer> normalizer;   // each may be null: that step does nothing
    std::unique_ptr<PreTokenizer> pre_tokenizer;
    std::unique_ptr<TokenModel> model;   // required
    std::vector<AddedToken> added_tokens;
    std::unique_ptr<PostProcessor> post_processor;
    std::unique_ptr<Decoder> decoder;
};

// encode() found, before tokenizing, that the text makes more than its `max_tokens`.
class TooManyTokens : public Error {
public:
    TooManyTokens(const std::string& message, std::size_t at_least) : Error(message), at_least(at_least) {}
    std::size_t at_least;
};

class Tokenizer {
public:
    // Refused (naming `file`) when an added token's id names another token of the vocabulary.
    Tokenizer(TokenizerParts parts, const std::string& file);
    // tokenizer.json's content.
    static Tokenizer read_json(const nlohmann::json& root, const std::string& file, ModelTables tables = {});

    // Python transformers replaces the post-processor where tokenizer_config.json says so.
    void set_post_processor(std::unique_ptr<PostProcessor> post_processor);

    // Hugging Face's encode(text, add_special_tokens). Throws on invalid UTF-8 (naming `label`),
    // and TooManyTokens when a text past a megabyte certainly makes more than `max_tokens`
    // (a model's limit): a 16 MiB word is then refused before BPE works through it.
    std::vector<EncodedToken> encode(std::string_view text, bool add_special_tokens = true,
                                     const std::string& label = "text",
                                     std::size_t max_tokens = std::numeric_limits<std::size_t>::max()) const;
    std::vector<std::int32_t> encode_ids(std::string_view text, bool add_special_tokens = true,
                                         const std::string& label = "text") const;
    // Each id's label as a person reads it (the decoder's view of it, one token at a time).
    std::vector<std::string> labels(std::span<const std::int32_t> ids) const;
    // The text the ids stand for. Throws on an id with no token.
    std::string decode(std::span<const std::int32_t> ids) const;

    // The vocabulary's form of an id ("Ġcat", "<0xE2>", "<|im_start|>"); nullptr if none.
    const std::string* token(std::int32_t id) const;
    std::optional<std::int32_t> find(std::string_view token) const;
    bool has_id(std::int32_t id) const { return token(id) != nullptr; }
    std::int32_t end_id() const { return end_id_; }   // one past the largest id
    std::size_t vocab_size() const;                   // model vocabulary plus added tokens
    const AddedTokens& added_tokens() const { return added_; }
    const TokenModel& model() const { return *parts_.model; }

private:
    std::vector<std::string> token_strings(std::span<const std::int32_t> ids) const;

    TokenizerParts parts_;
    AddedTokens added_;
    std::int32_t end_id_ = 0;
};

}   // namespace headscope::tokenizer
