#pragma once
// Unigram, as SentencePiece trains it and tokenizer.json writes it (T5, Flan-T5, mT5,
// ALBERT, XLNet): every piece has a log-probability, and a piece of text becomes the
// sequence of vocabulary pieces whose scores sum highest (Viterbi over its characters, a
// piece found at each start in order of length, the first of equal totals kept). A
// character no piece covers is the unknown token, scored as the lowest piece less 10
// (SentencePiece's kUnkPenalty), a run of them one unknown token; with byte_fallback it is
// its UTF-8 bytes' <0xXX> tokens instead.

#include "core/text/tokenizer/token_model.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace headscope::tokenizer {

class UnigramModel final : public TokenModel {
public:
    // `vocab` and `scores` by id; `unk_id` indexes them (refused otherwise), or is -1: no
    // unknown token (a character no piece covers is then refused).
    UnigramModel(Vocabulary vocab, std::vector<double> scores, std::int32_t unk_id, bool byte_fallback);

    void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override;
    const Vocabulary& vocabulary() const override { return vocab_; }

private:
    // The unknown character at bytes [begin, end): <0xXX> tokens where the model falls back to
    // bytes and has them all, else the unknown token (joined to one just before it).
    void add_unknown(std::string_view piece, std::size_t begin, std::size_t end, std::vector<ModelToken>& out) const;

    Vocabulary vocab_;
    std::vector<double> scores_;
    std::int32_t unk_id_ = 0;
    bool byte_fallback_ = false;
    double unk_score_ = 0.0;
};

// {"type": "Unigram", "unk_id": 2, "vocab": [["<pad>", 0.0], ["▁the", -3.2], ...], "byte_fallback": false}
// The pieces streamed into `tables.scored` where they were (else read from the field).
std::unique_ptr<TokenModel> read_unigram_model(const JsonField& field, ModelTables tables = {});

}   // namespace headscope::tokenizer
