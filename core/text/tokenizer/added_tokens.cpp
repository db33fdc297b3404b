#include "core/text/tokenizer/added_tokens.h"

#include "core/text/tokenizer/unicode_chars.h"

#include <algorithm>

namespace headscope::tokenizer {

void TokenMatcher::add(std::string_view text, std::size_t token_index) {
    if (text.empty()) return;
    std::uint32_t node = 0;
    for (const char ch : text) {
        const auto byte = static_cast<unsigned char>(ch);
        auto& children = nodes_[node].children;
        const auto it = std::lower_bound(children.begin(), children.end(), byte,
                                         [](const auto& child, unsigned char b) { return child.first < b; });
        if (it != children.end() && it->first == byte) {
            node = it->second;
        } else {
            const auto next = static_cast<std::uint32_t>(nodes_.size());
            children.insert(it, {byte, next});
            nodes_.emplace_back();
            node = next;
        }
    }
    // The first token listed keeps a string given twice.
    if (!nodes_[node].token) nodes_[node].token = token_index;
    starts_[static_cast<unsigned char>(text[0])] = true;
}

std::optional<std::pair<std::size_t, std::size_t>> TokenMatcher::longest_at(std::string_view text,
                                                                            std::size_t at) const {
    if (at >= text.size() || !starts_[static_cast<unsigned char>(text[at])]) return std::nullopt;
    std::optional<std::pair<std::size_t, std::size_t>> best;
    std::uint32_t node = 0;
    for (std::size_t i = at; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const auto& children = nodes_[node].children;
        const auto it = std::lower_bound(children.begin(), children.end(), byte,
                                         [](const auto& child, unsigned char b) { return child.first < b; });
        if (it == children.end() || it->first != byte) break;
        node = it->second;
        if (nodes_[node].token) best = {{*nodes_[node].token, i + 1 - at}};
    }
    return best;
}

namespace {

bool ends_with_word(std::string_view text) {
    return !text.empty() && is_word_char(decode_char(text, last_char_start(text)).c);
}

bool starts_with_word(std::string_view text) { return !text.empty() && is_word_char(decode_char(text, 0).c); }

}   // namespace

AddedTokens::AddedTokens(std::vector<AddedToken> tokens, const Normalizer* normalizer) : tokens_(std::move(tokens)) {
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        const AddedToken& token = tokens_[i];
        by_id_.emplace(token.id, i);
        if (!token.normalized) {
            raw_matcher_.add(token.content, i);
        } else if (normalizer != nullptr) {
            NormalizedText text(token.content, 0);
            normalizer->normalize(text);
            normalized_matcher_.add(text.text(), i);
        } else {
            normalized_matcher_.add(token.content, i);
        }
    }
}

std::vector<AddedToken> AddedTokens::read(const JsonField& field) {
    std::vector<AddedToken> tokens;
    for (std::size_t i = 0; i < field.size(); ++i) {
        const JsonField entry = field.at(i);
        AddedToken token;
        token.id = static_cast<std::int32_t>(entry.at("id").integer(0, 16'000'000));
        token.content = entry.at("content").string();
        token.special = entry.bool_or("special", false);
        token.single_word = entry.bool_or("single_word", false);
        token.lstrip = entry.bool_or("lstrip", false);
        token.rstrip = entry.bool_or("rstrip", false);
        token.normalized = entry.bool_or("normalized", !token.special);
        tokens.push_back(std::move(token));
    }
    return tokens;
}

const AddedToken* AddedTokens::by_id(std::int32_t id) const {
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedTokens::by_content(std::string_view content) const {
    for (const AddedToken& token : tokens_) {
        if (token.content == content) return &token;
    }
    return nullptr;
}

void AddedTokens::split(std::vector<Piece>& pieces, const TokenMatcher& matcher) const {
    std::vector<Piece> out;
    for (Piece& piece : pieces) {
        if (piece.added_id || matcher.empty()) {
            if (!piece.text.empty() || piece.added_id) out.push_back(std::move(piece));
            continue;
        }
        const std::string& s = piece.text.text();
        std::size_t kept_until = 0;   // the text before this is in `out`
        const auto keep = [&](std::size_t begin, std::size_t end, std::optional<std::int32_t> id) {
            if (end > begin) out.push_back(Piece{piece.text.slice(begin, end), id});
        };
        for (std::size_t at = 0; at < s.size();) {
            const auto found = matcher.longest_at(s, at);
            if (!found) {
                ++at;
                continue;
            }
            const AddedToken& token = tokens_[found->first];
            std::size_t begin = at, end = at + found->second;
            at = end;   // the search goes on after the match, kept or not
            if (token.single_word && (ends_with_word(std::string_view(s).substr(0, begin)) ||
                                      starts_with_word(std::string_view(s).substr(end)))) {
                continue;
            }
            if (token.lstrip) {
                while (begin > kept_until) {
                    const std::size_t previous = last_char_start(std::string_view(s).substr(0, begin));
                    if (!is_white_space(decode_char(s, previous).c)) break;
                    begin = previous;
                }
            }
            if (token.rstrip) {
                while (end < s.size() && is_white_space(decode_char(s, end).c)) end += decode_char(s, end).length;
            }
            keep(kept_until, begin, std::nullopt);
            keep(begin, end, token.id);
            kept_until = end;
        }
        keep(kept_until, s.size(), std::nullopt);
    }
    pieces = std::move(out);
}

std::vector<Piece> AddedTokens::extract_and_normalize(std::string_view text, const Normalizer* normalizer) const {
    std::vector<Piece> pieces;
    pieces.push_back(Piece{NormalizedText(text, 0), std::nullopt});
    split(pieces, raw_matcher_);
    for (Piece& piece : pieces) {
        if (!piece.added_id && normalizer != nullptr) normalizer->normalize(piece.text);
    }
    split(pieces, normalized_matcher_);
    std::erase_if(pieces, [](const Piece& p) { return !p.added_id && p.text.empty(); });
    return pieces;
}

}   // namespace headscope::tokenizer
