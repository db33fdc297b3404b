#include "core/text/tokenizer/wordpiece_model.h"

#include "core/base/error.h"
#include "core/text/tokenizer/unicode_chars.h"

namespace headscope::tokenizer {

WordPieceModel::WordPieceModel(Vocabulary vocab, WordPieceSettings settings)
    : vocab_(std::move(vocab)), settings_(std::move(settings)) {
    const auto unk = vocab_.find(settings_.unk_token);
    if (!unk) throw Error("unk_token \"" + settings_.unk_token + "\" is not in the vocabulary");
    unk_id_ = *unk;
}

void WordPieceModel::tokenize(std::string_view piece, std::vector<ModelToken>& out) const {
    std::size_t chars = 0;
    for (std::size_t at = 0; at < piece.size(); at += decode_char(piece, at).length) ++chars;
    if (chars > settings_.max_input_chars_per_word) {
        out.push_back({unk_id_, 0, piece.size()});
        return;
    }
    const std::size_t first = out.size();
    std::string candidate;
    for (std::size_t start = 0; start < piece.size();) {
        std::optional<std::int32_t> found;
        std::size_t end = piece.size();
        while (start < end) {
            candidate.clear();
            if (start > 0) candidate += settings_.continuing_subword_prefix;
            candidate.append(piece.substr(start, end - start));
            if ((found = vocab_.find(candidate))) break;
            end = last_char_start(piece.substr(0, end));
            if (end <= start) break;
        }
        if (!found) {   // the whole piece is unknown
            out.resize(first);
            out.push_back({unk_id_, 0, piece.size()});
            return;
        }
        out.push_back({*found, start, end});
        start = end;
    }
}

std::unique_ptr<TokenModel> read_wordpiece_model(const JsonField& field, ModelTables tables) {
    WordPieceSettings settings;
    settings.unk_token = field.string_or("unk_token", settings.unk_token);
    settings.continuing_subword_prefix =
        field.string_or("continuing_subword_prefix", settings.continuing_subword_prefix);
    if (const auto max = field.find("max_input_chars_per_word")) {
        settings.max_input_chars_per_word = static_cast<std::size_t>(max->integer(1, 1'000'000));
    }
    Vocabulary vocab = tables.vocab ? std::move(*tables.vocab) : Vocabulary::read(field.at("vocab"));
    try {
        return std::make_unique<WordPieceModel>(std::move(vocab), std::move(settings));
    } catch (const Error& e) {
        field.at("unk_token").fail(std::string(e.what()).substr(std::string("unk_token ").size()));
    }
}

}   // namespace headscope::tokenizer
