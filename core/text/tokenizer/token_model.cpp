#include "core/text/tokenizer/token_model.h"

#include "core/base/json_file.h"
#include "core/text/tokenizer/bpe_model.h"
#include "core/text/tokenizer/wordpiece_model.h"

namespace headscope::tokenizer {

Vocabulary Vocabulary::read(const JsonField& field) {
    if (!field.value().is_object()) field.expected("an object {\"token\": id, ...}");
    if (field.value().size() > max_entries) {
        field.fail(std::to_string(field.value().size()) + " entries, more than " + std::to_string(max_entries));
    }
    Vocabulary vocab;
    vocab.ids_.reserve(field.value().size());
    for (const auto& [token, value] : field.value().items()) {
        const JsonField id(value, json_child_path(field.path(), token), field.file());
        const auto n = static_cast<std::int32_t>(id.integer(0, static_cast<std::int64_t>(max_entries) - 1));
        if (const std::string* other = vocab.token(n)) {
            id.fail("id " + std::to_string(n) + " is also the id of \"" + *other + "\"");
        }
        vocab.add(token, n);
    }
    return vocab;
}

void Vocabulary::add(std::string token, std::int32_t id) {
    const auto index = static_cast<std::size_t>(id);
    if (index >= tokens_.size()) {
        tokens_.resize(index + 1);
        present_.resize(index + 1, false);
    }
    tokens_[index] = token;
    present_[index] = true;
    ids_[std::move(token)] = id;
}

std::optional<std::int32_t> Vocabulary::find(std::string_view token) const {
    const auto it = ids_.find(token);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

const std::string* Vocabulary::token(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size() || !present_[static_cast<std::size_t>(id)]) {
        return nullptr;
    }
    return &tokens_[static_cast<std::size_t>(id)];
}

std::unique_ptr<TokenModel> read_token_model(const JsonField& field) {
    // Older files leave "type" out; their fields say which model they are.
    std::string type;
    if (field.find("type")) {
        type = field.type();
    } else if (field.find("merges")) {
        type = "BPE";
    } else {
        type = "WordPiece";
    }
    if (type == "BPE") return read_bpe_model(field);
    if (type == "WordPiece") return read_wordpiece_model(field);
    if (type == "Unigram") {
        field.at("type").fail("\"Unigram\" (SentencePiece's unigram model, as T5 ships) is not supported yet");
    }
    field.at("type").fail("\"" + type + "\" is not a model type tokenizer.json defines here (BPE, WordPiece)");
}

}   // namespace headscope::tokenizer
