#pragma once
// Byte-pair encoding as Hugging Face's BPE model: a piece starts as its characters (or,
// with byte_fallback, the <0xNN> tokens of a character the vocabulary lacks), and merges
// are applied lowest rank first, leftmost first on ties, until none applies.

#include "core/text/tokenizer/token_model.h"

#include <array>
#include <utility>

namespace headscope::tokenizer {

struct BpeSettings {
    std::optional<std::string> unk_token;
    std::string continuing_subword_prefix;
    std::string end_of_word_suffix;
    bool fuse_unk = false;
    bool byte_fallback = false;
    bool ignore_merges = false;
};

class BpeModel : public TokenModel {
public:
    // `merges` by rank; `merge_label(i)` names merge i in messages ("merges.txt line 7").
    BpeModel(Vocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeSettings settings,
             const std::function<std::string(std::size_t)>& merge_label);

    void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override;
    const Vocabulary& vocabulary() const override { return vocab_; }
    std::string_view word_end() const override { return settings_.end_of_word_suffix; }
    std::size_t merge_count() const { return merge_count_; }
    std::optional<std::int32_t> unknown_id() const { return unk_id_; }
    // Every token covers at most the bytes of the longest vocabulary entry (an unknown, one
    // character), unless unknowns fuse: a run of them is one token however long.
    std::size_t fewest_tokens(std::string_view piece) const override;

private:
    struct Merge {
        std::uint32_t rank;
        std::int32_t id;
    };
    struct Symbol {
        std::int32_t id;
        std::size_t begin, end;
    };
    std::vector<Symbol> initial_symbols(std::string_view piece) const;
    void merge(std::vector<Symbol>& symbols) const;
    const Merge* find_merge(std::int32_t left, std::int32_t right) const;
    void add_merge(std::uint64_t key, Merge merge);

    Vocabulary vocab_;
    // (left id, right id) -> merge, by open addressing: the encoder's innermost lookup.
    struct MergeSlot {
        std::uint64_t key = 0;
        Merge merge{0, -1};   // id -1: empty
    };
    std::vector<MergeSlot> merges_;
    std::size_t merge_count_ = 0;
    BpeSettings settings_;
    std::optional<std::int32_t> unk_id_;
    std::array<std::int32_t, 256> byte_ids_{};   // <0xNN> tokens for byte_fallback, -1 where missing
};

std::unique_ptr<TokenModel> read_bpe_model(const JsonField& field, ModelTables tables);
// One merge, written "a b" or ["a", "b"].
std::pair<std::string, std::string> read_merge(const JsonField& merge);

}   // namespace headscope::tokenizer
