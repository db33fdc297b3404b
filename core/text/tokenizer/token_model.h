#pragma once
// The model of tokenizer.json ("model": {...}): what turns one pre-tokenized piece into
// vocabulary ids. BPE (byte-level as GPT-2 and Llama 3, or SentencePiece-style with
// byte_fallback as Llama 2 and Gemma) and WordPiece (BERT).

#include "core/base/json_file.h"
#include "core/text/tokenizer/json_field.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
    // One entry "token": id, checked (`path` names it in messages: "<file>: model.vocab.<token>").
    void read_entry(std::string token, const nlohmann::json& id, const std::string& file, const std::string& path);
    // False (nothing changed, `token` left as it was) when the token is already there; the
    // caller checked the id.
    bool add(std::string&& token, std::int32_t id);

    std::optional<std::int32_t> find(std::string_view token) const;
    const std::string* token(std::int32_t id) const;   // nullptr when no token has the id
    std::size_t size() const { return count_; }
    std::int32_t end_id() const { return static_cast<std::int32_t>(tokens_.size()); }   // one past the largest id
    std::size_t longest() const { return longest_; }                                    // bytes of the longest token

private:
    // Token -> id as open addressing over the ids (each slot: the hash's top half and id + 1),
    // the key compared in tokens_: a lookup touches two cache lines, not a node chain.
    std::size_t slot_of(std::string_view token, std::uint64_t hash) const;
    void grow();

    std::vector<std::uint64_t> slots_;   // 0: empty
    std::size_t count_ = 0;
    std::size_t longest_ = 0;
    std::vector<std::string> tokens_;
    std::vector<bool> present_;
};

class TokenModel {
public:
    virtual ~TokenModel() = default;
    // Appends the tokens of one piece (the pre-tokenized text, as the vocabulary writes it).
    virtual void tokenize(std::string_view piece, std::vector<ModelToken>& out) const = 0;
    virtual const Vocabulary& vocabulary() const = 0;
    // At least how many tokens `piece` becomes, found without tokenizing it (0: no bound).
    virtual std::size_t fewest_tokens(std::string_view) const { return 0; }
    // What marks a token that ends a word (CLIP's BPE: "</w>"); empty where nothing does.
    virtual std::string_view word_end() const { return {}; }
};

// model.vocab and model.merges taken straight from the parser (JsonStream) rather than
// from a DOM: the large tables of a real tokenizer.json, read in one pass.
struct ModelTables {
    std::optional<Vocabulary> vocab;
    // A Unigram model's vocabulary: [piece, score] entries in id order, as given (checked by its reader).
    std::optional<std::vector<nlohmann::json>> scored;
    std::optional<std::vector<std::pair<std::string, std::string>>> merges;
};
// The streams that fill `tables` while `file` is parsed; entries are checked as they come.
std::vector<JsonStream> model_table_streams(ModelTables& tables, const std::string& file);

// From the model's JSON; tables already streamed are taken from `tables`.
std::unique_ptr<TokenModel> read_token_model(const JsonField& field, ModelTables tables = {});

}   // namespace headscope::tokenizer
