#pragma once
// What every tokenizer fuzz target asserts of an encoding: ids the tokenizer has, one
// label per id, byte spans inside the text and in order (a token never starts before the
// one before it), encode_ids agreeing with encode, and decode() of the ids not throwing.
// One exception to the order, Hugging Face's own: BPE holds an unknown character back until
// the next known one, so byte-fallback tokens met meanwhile come out before it (the ids and
// their order match `tokenizers`; the spans stay each token's true bytes).

#include "core/text/tokenizer/bpe_model.h"
#include "core/text/tokenizer/tokenizer.h"
#include "fuzz_support.h"

#include <string_view>
#include <vector>

namespace headscope::fuzz {

inline std::vector<std::int32_t> check_encoding(const tokenizer::Tokenizer& t, std::string_view text,
                                                bool add_special_tokens) {
    const std::vector<tokenizer::EncodedToken> tokens = t.encode(text, add_special_tokens);
    const auto* bpe = dynamic_cast<const tokenizer::BpeModel*>(&t.model());
    const std::optional<std::int32_t> held_back = bpe ? bpe->unknown_id() : std::nullopt;
    std::vector<std::int32_t> ids;
    std::size_t previous = 0;
    for (const tokenizer::EncodedToken& token : tokens) {
        require(t.has_id(token.id), "a token id not in the vocabulary");
        require(token.begin <= token.end && token.end <= text.size(), "a token span outside the text");
        const bool unknown = held_back && token.id == *held_back;
        require(token.begin >= previous || unknown, "token spans out of order");
        if (!unknown) previous = token.begin;
        ids.push_back(token.id);
    }
    require(t.encode_ids(text, add_special_tokens) == ids, "encode_ids differs from encode");
    require(t.labels(ids).size() == ids.size(), "not one label per id");
    (void)t.decode(ids);
    return ids;
}

}   // namespace headscope::fuzz
