#pragma once
// The decoders of tokenizer.json ("decoder": {...}), used here for what people read: each
// token's label, and ids back to text. ByteLevel (byte characters to bytes), Metaspace
// ("▁" to a space), ByteFallback (<0xE2> to its byte), Replace, Fuse, Strip, WordPiece
// and Sequence. Labels are per token: a run of tokens that ends inside a character
// (<0xE2><0x80><0x99>, or GPT-2's byte pieces of an emoji) shows the text it spells at each
// of its positions; Fuse and what follows it apply to the whole text only.

#include "core/text/tokenizer/json_field.h"
#include "core/text/tokenizer/split_pattern.h"

#include <memory>
#include <string>
#include <vector>

namespace headscope::tokenizer {

class Decoder {
public:
    enum class Mode {
        text,    // as Hugging Face's decode: the tokens become the text
        labels   // each token stays its own, as bytes; a step that joins tokens ends the chain
    };
    virtual ~Decoder() = default;
    // Rewrites the tokens in place; false when labels should take no further steps (Fuse).
    virtual bool apply(std::vector<std::string>& tokens, Mode mode) const = 0;
};

std::unique_ptr<Decoder> read_decoder(const JsonField& field);
// GPT-2's (what a vocab.json folder gets).
std::unique_ptr<Decoder> make_byte_level_decoder();
// BERT's: "##" pieces joined to the word before, spaces elsewhere (what a vocab.txt folder gets).
std::unique_ptr<Decoder> make_wordpiece_decoder(const std::string& prefix, bool cleanup);

// Each token's label: the decoder's steps before any Fuse, then tokens that are not whole
// characters joined with their neighbours where together they are, else shown as \xNN.
std::vector<std::string> decode_labels(const Decoder* decoder, std::vector<std::string> tokens);
// The text the tokens stand for (invalid UTF-8 shown as U+FFFD, as Hugging Face does).
std::string decode_text(const Decoder* decoder, std::vector<std::string> tokens);

// What a person reads for bytes: complete UTF-8 characters as they are, control characters
// as \n, \t, \r or \x01, and bytes that are not a complete character as \xe2.
std::string readable_bytes(std::string_view bytes);

}   // namespace headscope::tokenizer
