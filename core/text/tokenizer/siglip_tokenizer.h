#pragma once
// transformers' SiglipTokenizer, as the zero-shot pipeline runs it: SigLIP's spiece.model
// (a SentencePieceModel loaded without the dummy prefix) and the steps around it:
//   "▁" + the text (any "▁" in it a space), lower-cased (do_lower_case)
//   -> cut at the special tokens (</s>, <unk>; the whitespace beside them dropped)
//   -> each other stretch canonicalised (ASCII punctuation removed, whitespace runs one
//      space, stripped) and encoded after "<unk>", whose own pieces are dropped (so a
//      stretch starts a word only where it says so)
//   -> a leading "▁" before a special token dropped, </s> appended unless last
//   -> padded with the pad token (</s>) to model_max_length (64), as padding="max_length":
//      the text tower has no attention mask and pools the last row, so the padding is
//      part of what it reads.
// Every token keeps the byte span of the label it came from; the ones added have none.

#include "core/text/tokenizer/post_processors.h"
#include "core/text/tokenizer/sentencepiece_model.h"
#include "core/text/tokenizer/tokenizer.h"

#include <string>
#include <string_view>
#include <vector>

namespace headscope::tokenizer {

// Whether `folder` holds SigLIP's tokenizer files: spiece.model, and a tokenizer_config.json
// naming SiglipTokenizer (a folder of a model takes spiece.model without asking).
bool is_siglip_tokenizer_folder(const std::string& folder);

class SiglipTokenizer {
public:
    // spiece.model and the tokenizer_config.json beside it ("": SiglipTokenizer's defaults).
    SiglipTokenizer(const std::string& spiece_model, const std::string& tokenizer_config);

    // The ids the text tower reads for `text` (named `label` in messages): </s> appended
    // (`add_special_tokens`) and padded to model_max_length (`pad`), as the pipeline does.
    std::vector<EncodedToken> encode(std::string_view text, const std::string& label, bool add_special_tokens = true,
                                     bool pad = true) const;
    // The model's pieces as a tokenizer: their labels ("▁cat" reads " cat"), lookups.
    const Tokenizer& pieces() const { return pieces_; }

private:
    std::vector<EncodedToken> encode_stretch(const NormalizedText& stretch) const;

    Tokenizer pieces_;
    const SentencePieceModel* model_ = nullptr;   // pieces_'s model
    bool lower_case_ = true;
    std::size_t max_length_ = 64;
    std::int32_t eos_id_ = 1;
    std::int32_t pad_id_ = 1;
    std::string unk_text_ = "<unk>";
    std::size_t unk_pieces_ = 0;                                  // how many pieces "<unk>" alone makes
    std::int32_t word_start_id_ = -1;                             // "▁" alone, where the model has it
    std::vector<std::pair<std::string, std::int32_t>> special_;   // text, id
    TokenMatcher special_matcher_;
};

}   // namespace headscope::tokenizer
