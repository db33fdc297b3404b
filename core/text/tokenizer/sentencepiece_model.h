#pragma once
// A SentencePiece model file (spiece.model, tokenizer.model) as a tokenizer's model, read and
// run by Google's own library (libsentencepiece): its normalisation (the precompiled
// character map, whitespace as "▁"), unigram or BPE segmentation and byte fallback, exactly
// as the Python binding transformers calls does them.

#include "core/text/tokenizer/token_model.h"

#include <memory>
#include <string>
#include <string_view>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace headscope::tokenizer {

struct SentencePieceOptions {
    // false: no "▁" put before the text (transformers' SiglipTokenizer and T5's legacy=False
    // load the model so, and mark word starts themselves).
    bool add_dummy_prefix = true;
};

class SentencePieceModel final : public TokenModel {
public:
    // The model proto's bytes, as read from `file` (named in refusals).
    SentencePieceModel(std::string_view model_bytes, const std::string& file, SentencePieceOptions options);
    ~SentencePieceModel() override;

    // The piece's tokens, spans in its bytes (a character the normaliser rewrote keeps its own).
    void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override;
    const Vocabulary& vocabulary() const override { return vocabulary_; }

    std::int32_t unk_id() const;
    bool is_byte(std::int32_t id) const;   // "<0xE2>": a byte of a character the pieces lack

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
    Vocabulary vocabulary_;
    std::string file_;
};

// The largest model file read (Gemma's tokenizer.model is 4 MB; SigLIP's spiece.model 0.8 MB).
inline constexpr std::uintmax_t max_sentencepiece_file_bytes = 64u << 20;

}   // namespace headscope::tokenizer
