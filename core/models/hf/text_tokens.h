#pragma once
// A text checkpoint's tokenizer as the Hugging Face text models use it: the folder's
// tokenizer files (core/text/tokenizer/tokenizer_folder.h) turning a sentence into ids,
// labels and byte spans, and ids into what a person reads; or SigLIP's spiece.model through
// transformers' SiglipTokenizer steps (core/text/tokenizer/siglip_tokenizer.h). A folder
// without tokenizer files reads token ids only.

#include "core/models/model.h"
#include "core/text/tokenizer/siglip_tokenizer.h"
#include "core/text/tokenizer/tokenizer.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace headscope {

class HfTextTokens {
public:
    // The tokenizer of `folder`, when it has one.
    explicit HfTextTokens(const std::string& folder);
    // SigLIP's: the folder's spiece.model, with its tokenizer_config.json where present.
    static HfTextTokens siglip(const std::string& folder);
    // None: ids are read as given and shown as numbers.
    HfTextTokens() = default;

    bool has_tokenizer() const { return pieces() != nullptr; }
    // What it was read from ("tokenizer.json + tokenizer_config.json", ...), or "none".
    const std::string& files() const { return files_; }

    // The sentence's ids (special tokens added as the tokenizer says), labels and spans;
    // `model` and `limit_field` name the model and the config field behind `max_tokens` in
    // errors. Throws without a tokenizer, for an empty or too long sentence, and for an id
    // the weights lack (`vocab_size`). `embeddings` is left for the model to fill.
    ModelInput encode(std::string_view text, Eigen::Index max_tokens, Eigen::Index vocab_size, const std::string& model,
                      const std::string& limit_field) const;
    // Labels of ids as given: ids the tokenizer knows are labelled together (a run of byte
    // tokens spells one character); any other id shows as its number.
    std::vector<std::string> labels(std::span<const std::int64_t> ids) const;
    // One id's text, or its number.
    std::string label(Eigen::Index id) const;

private:
    // What labels ids: the tokenizer, or SigLIP's pieces; null without either.
    const tokenizer::Tokenizer* pieces() const;

    std::optional<tokenizer::Tokenizer> tokenizer_;
    std::optional<tokenizer::SiglipTokenizer> siglip_;
    std::string files_ = "none";
};

}   // namespace headscope
