#pragma once
// The model of tokenizer.json ("model": {...}): what turns one pre-tokenized piece into
// vocabulary ids. BPE (byte-level as GPT-2 and Llama 3, or SentencePiece-style with
// byte_fallback as Llama 2 and Gemma) and WordPiece (BERT).

#include "core/text/tokenizer/json_field.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace headscope::tokenizer {

struct ModelToken {
    std::int32_t id = 0;
    std::size_t begin = 0;   // bytes [begin, end) of the piece
    std::size_t end = 0;
};

// A vocabulary: token <-> id, ids in [0, max_vocab_entries), holes allowed.
class Vocabulary {
public:
    // The most entries a vocabulary (or a merge list) may hold, checked before tables are built.
    static constexpr std::size_t max_entries = 4'000'000;

    // {"token": id, ...}; refused naming the field on a bad or repeated id.
    static Vocabulary read(const JsonField& field);
    void add(std::string token, std::int32_t id);   // the caller checked the id

    std::optional<std::int32_t> find(std::string_view token) const;
    const std::string* token(std::int32_t id) const;   // nullptr when no token has the id
    std::size_t size() const { return ids_.size(); }
    std::int32_t end_id() const { return static_cast<std::int32_t>(tokens_.size()); }   // one past the largest id

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, std::int32_t, Hash, std::equal_to<>> ids_;
    std::vector<std::string> tokens_;
    std::vector<bool> present_;
};

class TokenModel {
public:
    virtual ~TokenModel() = default;
    // Appends the tokens of one piece (the pre-tokenized text, as the vocabulary writes it).
    virtual void tokenize(std::string_view piece, std::vector<ModelToken>& out) const = 0;
    virtual const Vocabulary& vocabulary() const = 0;
};

std::unique_ptr<TokenModel> read_token_model(const JsonField& field);

}   // namespace headscope::tokenizer
