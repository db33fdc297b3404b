#include "core/text/tokenizer/tokenizer.h"

#include "core/base/error.h"
#include "core/text/text.h"

#include <algorithm>

namespace headscope::tokenizer {

Tokenizer::Tokenizer(TokenizerParts parts, const std::string& file) : parts_(std::move(parts)) {
    if (!parts_.model) throw Error(file + ": no model");
    const Vocabulary& vocab = parts_.model->vocabulary();
    if (vocab.size() == 0 && parts_.added_tokens.empty()) throw Error(file + ": the vocabulary is empty");
    end_id_ = vocab.end_id();
    for (std::size_t i = 0; i < parts_.added_tokens.size(); ++i) {
        const AddedToken& token = parts_.added_tokens[i];
        if (const std::string* other = vocab.token(token.id); other != nullptr && *other != token.content) {
            throw Error(file + ": added_tokens[" + std::to_string(i) + "]: id " + std::to_string(token.id) + " of \"" +
                        token.content + "\" is already \"" + *other + "\" in model.vocab");
        }
        end_id_ = std::max(end_id_, token.id + 1);
    }
    added_ = AddedTokens(parts_.added_tokens, parts_.normalizer.get());
    if (parts_.post_processor) parts_.post_processor->check_ids([this](std::int32_t id) { return has_id(id); });
}

Tokenizer Tokenizer::read_json(const nlohmann::json& root, const std::string& file, ModelTables tables) {
    const JsonField top(root, "", file);
    if (!root.is_object()) top.expected("a JSON object");
    TokenizerParts parts;
    if (const auto field = top.find("normalizer")) parts.normalizer = read_normalizer(*field);
    if (const auto field = top.find("pre_tokenizer")) parts.pre_tokenizer = read_pre_tokenizer(*field);
    parts.model = read_token_model(top.at("model"), std::move(tables));
    if (const auto field = top.find("added_tokens")) parts.added_tokens = AddedTokens::read(*field);
    if (const auto field = top.find("post_processor")) parts.post_processor = read_post_processor(*field);
    if (const auto field = top.find("decoder")) parts.decoder = read_decoder(*field);
    return Tokenizer(std::move(parts), file);
}

void Tokenizer::set_post_processor(std::unique_ptr<PostProcessor> post_processor) {
    if (post_processor) post_processor->check_ids([this](std::int32_t id) { return has_id(id); });
    parts_.post_processor = std::move(post_processor);
}

std::vector<EncodedToken> Tokenizer::encode(std::string_view text, bool add_special_tokens, const std::string& label,
                                            std::size_t max_tokens) const {
    validate_utf8(text, label);
    std::vector<Piece> pieces = added_.extract_and_normalize(text, parts_.normalizer.get());
    if (parts_.pre_tokenizer) parts_.pre_tokenizer->pre_tokenize(pieces);
    std::size_t at_least = 0;
    for (const Piece& piece : pieces) at_least += piece.added_id ? 1 : parts_.model->fewest_tokens(piece.text.text());
    // Up to a megabyte the exact count costs milliseconds, and says more than a bound.
    constexpr std::size_t counted_bytes = std::size_t{1} << 20;
    if (at_least > max_tokens && text.size() > counted_bytes) {
        throw TooManyTokens(label + ": at least " + std::to_string(at_least) + " tokens, more than " +
                                std::to_string(max_tokens),
                            at_least);
    }
    std::vector<EncodedToken> tokens;
    tokens.reserve(text.size() / 3 + 4);
    std::vector<ModelToken> model_tokens;
    for (const Piece& piece : pieces) {
        if (piece.added_id) {
            const Span span = piece.text.original_span(0, piece.text.text().size());
            const AddedToken* added = added_.by_id(*piece.added_id);
            tokens.push_back({*piece.added_id, span.begin, span.end, added != nullptr && added->special});
            continue;
        }
        model_tokens.clear();
        parts_.model->tokenize(piece.text.text(), model_tokens);
        for (const ModelToken& t : model_tokens) {
            const Span span = piece.text.original_span(t.begin, t.end);
            tokens.push_back({t.id, span.begin, span.end, false});
        }
    }
    if (add_special_tokens && parts_.post_processor) parts_.post_processor->process(tokens, text.size());
    return tokens;
}

std::vector<std::int32_t> Tokenizer::encode_ids(std::string_view text, bool add_special_tokens,
                                                const std::string& label) const {
    std::vector<std::int32_t> ids;
    for (const EncodedToken& t : encode(text, add_special_tokens, label)) ids.push_back(t.id);
    return ids;
}

const std::string* Tokenizer::token(std::int32_t id) const {
    if (const AddedToken* added = added_.by_id(id)) return &added->content;
    return parts_.model->vocabulary().token(id);
}

std::optional<std::int32_t> Tokenizer::find(std::string_view token) const {
    if (const AddedToken* added = added_.by_content(token)) return added->id;
    return parts_.model->vocabulary().find(token);
}

std::size_t Tokenizer::vocab_size() const {
    std::size_t extra = 0;
    for (const AddedToken& token : added_.tokens()) {
        if (parts_.model->vocabulary().token(token.id) == nullptr) ++extra;
    }
    return parts_.model->vocabulary().size() + extra;
}

std::vector<std::string> Tokenizer::token_strings(std::span<const std::int32_t> ids) const {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (const std::int32_t id : ids) {
        const std::string* t = token(id);
        if (t == nullptr) throw Error("token id " + std::to_string(id) + " is not in the vocabulary");
        tokens.push_back(*t);
    }
    return tokens;
}

std::vector<std::string> Tokenizer::labels(std::span<const std::int32_t> ids) const {
    // Added tokens are shown as they are written; the decoder reads the rest.
    std::vector<std::string> labels = decode_labels(parts_.decoder.get(), token_strings(ids));
    // A word's last token reads with the space after it, as transformers' CLIPTokenizerFast
    // decodes the end-of-word suffix ("cat</w>" -> "cat ").
    const std::string_view word_end = parts_.model->word_end();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (const AddedToken* added = added_.by_id(ids[i])) {
            labels[i] = readable_bytes(added->content);
        } else if (!word_end.empty() && labels[i].ends_with(word_end)) {
            labels[i].replace(labels[i].size() - word_end.size(), word_end.size(), " ");
        }
    }
    return labels;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids) const {
    return decode_text(parts_.decoder.get(), token_strings(ids));
}

}   // namespace headscope::tokenizer
