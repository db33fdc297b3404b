#pragma once
// The pre-tokenizers of tokenizer.json ("pre_tokenizer": {...}): ByteLevel, Split,
// Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit, BertPreTokenizer and
// Sequence. Each cuts the pieces not yet tokenized (added tokens are already whole)
// into smaller ones; the model then tokenizes each piece on its own.

#include "core/text/tokenizer/json_field.h"
#include "core/text/tokenizer/normalized_text.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace headscope::tokenizer {

// A stretch of the text on its way to the model; an added token found in the text is a
// piece with its id already known.
struct Piece {
    NormalizedText text;
    std::optional<std::int32_t> added_id;
};

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    virtual void pre_tokenize(std::vector<Piece>& pieces) const = 0;
};

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonField& field);

// GPT-2's: the ByteLevel pre-tokenizer with its regex (what a vocab.json folder gets).
std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space);
// BERT's: split on whitespace, then punctuation apart (what a vocab.txt folder gets).
std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();

}   // namespace headscope::tokenizer
