#pragma once
// WordPiece as BERT uses it: each piece is cut greedily into the longest tokens in the
// vocabulary, "##" marking a token that continues a word; a piece that cannot be cut,
// or is longer than max_input_chars_per_word characters, becomes the unknown token.

#include "core/text/tokenizer/token_model.h"

namespace headscope::tokenizer {

struct WordPieceSettings {
    std::string unk_token = "[UNK]";
    std::string continuing_subword_prefix = "##";
    std::size_t max_input_chars_per_word = 100;
};

class WordPieceModel : public TokenModel {
public:
    WordPieceModel(Vocabulary vocab, WordPieceSettings settings);   // refused when unk_token is not in vocab
    void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override;
    const Vocabulary& vocabulary() const override { return vocab_; }

private:
    Vocabulary vocab_;
    WordPieceSettings settings_;
    std::int32_t unk_id_ = 0;
};

std::unique_ptr<TokenModel> read_wordpiece_model(const JsonField& field, ModelTables tables);

}   // namespace headscope::tokenizer
