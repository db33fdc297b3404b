#include "core/text/tokenizer/token_model.h"

#include "core/base/json_file.h"
#include "core/text/tokenizer/bpe_model.h"
#include "core/text/tokenizer/unigram_model.h"
#include "core/text/tokenizer/wordpiece_model.h"

#include <algorithm>

namespace headscope::tokenizer {

Vocabulary Vocabulary::read(const JsonField& field) {
    if (!field.value().is_object()) field.expected("an object {\"token\": id, ...}");
    Vocabulary vocab;
    for (const auto& [token, value] : field.value().items()) vocab.read_entry(token, value, field.file(), field.path());
    return vocab;
}

void Vocabulary::read_entry(std::string token, const nlohmann::json& id, const std::string& file,
                            const std::string& path) {
    // The entry's path is spelled out only for a message: this runs for every token.
    const bool valid = id.is_number_integer() && id.get<std::int64_t>() >= 0 &&
                       (id.is_number_unsigned() ? id.get<std::uint64_t>()
                                                : static_cast<std::uint64_t>(id.get<std::int64_t>())) < max_entries;
    const auto n = valid ? static_cast<std::int32_t>(id.get<std::int64_t>()) : -1;
    const std::string* other = valid ? this->token(n) : nullptr;
    if (!valid || other != nullptr) {
        const JsonField entry(id, json_child_path(path, token), file);
        if (!valid) entry.expected("a whole number from 0 to " + std::to_string(max_entries - 1));
        entry.fail("id " + std::to_string(n) + " is also the id of \"" + *other + "\"");
    }
    if (count_ >= max_entries) {
        JsonField(id, path, file).fail("more than " + std::to_string(max_entries) + " entries");
    }
    if (!add(std::move(token), n)) JsonField(id, json_child_path(path, token), file).fail("the token is given twice");
}

std::vector<JsonStream> model_table_streams(ModelTables& tables, const std::string& file) {
    std::vector<JsonStream> streams;
    streams.push_back({"model.vocab", [&tables, &file](JsonEntry&& entry) {
                           if (!entry.in_object) {   // Unigram's [[piece, score], ...]: its reader checks them
                               if (!tables.scored) tables.scored.emplace();
                               if (tables.scored->size() >= Vocabulary::max_entries) {
                                   JsonField(entry.value, "model.vocab", file)
                                       .fail("more than " + std::to_string(Vocabulary::max_entries) + " pieces");
                               }
                               tables.scored->push_back(std::move(entry.value));
                               return;
                           }
                           if (!tables.vocab) tables.vocab.emplace();
                           tables.vocab->read_entry(std::move(entry.key), entry.value, file, "model.vocab");
                       }});
    streams.push_back({"model.merges", [&tables, &file](JsonEntry&& entry) {
                           if (entry.in_object) return;
                           if (!tables.merges) tables.merges.emplace();
                           if (tables.merges->size() >= Vocabulary::max_entries) {
                               JsonField(entry.value, "model.merges", file)
                                   .fail("more than " + std::to_string(Vocabulary::max_entries) + " merges");
                           }
                           const JsonField merge(entry.value, json_child_path("model.merges", entry.index), file);
                           tables.merges->push_back(read_merge(merge));
                       }});
    return streams;
}

namespace {

std::uint64_t hash_of(std::string_view token) { return std::hash<std::string_view>{}(token); }

constexpr std::uint64_t tag_of(std::uint64_t hash) { return hash & 0xFFFFFFFF00000000ull; }

}   // namespace

std::size_t Vocabulary::slot_of(std::string_view token, std::uint64_t hash) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t at = (hash >> 32) & mask;; at = (at + 1) & mask) {
        const std::uint64_t slot = slots_[at];
        if (slot == 0) return at;
        if (tag_of(slot) == tag_of(hash) && tokens_[(slot & 0xFFFFFFFFu) - 1] == token) return at;
    }
}

void Vocabulary::grow() {
    std::vector<std::uint64_t> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, old.size() * 2), 0);
    for (const std::uint64_t slot : old) {
        if (slot == 0) continue;
        const std::size_t mask = slots_.size() - 1;
        std::size_t at = (slot >> 32) & mask;   // the slot keeps the hash's top half: no rehashing
        while (slots_[at] != 0) at = (at + 1) & mask;
        slots_[at] = slot;
    }
}

bool Vocabulary::add(std::string&& token, std::int32_t id) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    const auto index = static_cast<std::size_t>(id);
    if (index >= tokens_.size()) {
        tokens_.resize(index + 1);
        present_.resize(index + 1, false);
    }
    const std::uint64_t hash = hash_of(token);
    const std::size_t at = slot_of(token, hash);
    if (slots_[at] != 0) return false;
    ++count_;
    longest_ = std::max(longest_, token.size());
    tokens_[index] = std::move(token);
    present_[index] = true;
    slots_[at] = tag_of(hash) | (static_cast<std::uint64_t>(id) + 1);
    return true;
}

std::optional<std::int32_t> Vocabulary::find(std::string_view token) const {
    if (slots_.empty()) return std::nullopt;
    const std::uint64_t slot = slots_[slot_of(token, hash_of(token))];
    if (slot == 0) return std::nullopt;
    return static_cast<std::int32_t>((slot & 0xFFFFFFFFu) - 1);
}

const std::string* Vocabulary::token(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size() || !present_[static_cast<std::size_t>(id)]) {
        return nullptr;
    }
    return &tokens_[static_cast<std::size_t>(id)];
}

std::unique_ptr<TokenModel> read_token_model(const JsonField& field, ModelTables tables) {
    // Older files leave "type" out; their fields say which model they are.
    std::string type;
    if (field.find("type")) {
        type = field.type();
    } else if (field.find("merges")) {
        type = "BPE";
    } else {
        type = "WordPiece";
    }
    if (type == "BPE") return read_bpe_model(field, std::move(tables));
    if (type == "WordPiece") return read_wordpiece_model(field, std::move(tables));
    if (type == "Unigram") return read_unigram_model(field, std::move(tables));
    if (type == "WordLevel") {
        field.at("type").fail("\"" + type + "\" is not read yet (this reader reads BPE, WordPiece and Unigram)");
    }
    field.at("type").fail("\"" + type + "\" is not a tokenizer.json model type (expected BPE, WordPiece or Unigram)");
}

}   // namespace headscope::tokenizer
