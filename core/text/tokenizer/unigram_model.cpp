#include "core/text/tokenizer/unigram_model.h"

#include "core/base/error.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace headscope::tokenizer {

namespace {

// SentencePiece's kUnkPenalty: the unknown token scores this far below the lowest piece.
constexpr double unknown_penalty = 10.0;

// The best way found so far to read the text up to a byte: its total score, and the last
// token (its id, its first byte; unknown: unk_id).
struct Best {
    double score = -std::numeric_limits<double>::infinity();
    std::int32_t id = -1;
    std::size_t begin = 0;
    bool reached = false;
};

}   // namespace

UnigramModel::UnigramModel(Vocabulary vocab, std::vector<double> scores, std::int32_t unk_id, bool byte_fallback)
    : vocab_(std::move(vocab)), scores_(std::move(scores)), unk_id_(unk_id), byte_fallback_(byte_fallback) {
    if (unk_id_ < -1 || unk_id_ >= static_cast<std::int32_t>(scores_.size())) {
        throw Error("unk_id " + std::to_string(unk_id_) + " is not one of the vocabulary's " +
                    std::to_string(scores_.size()) + " pieces");
    }
    unk_score_ = (scores_.empty() ? 0.0 : *std::min_element(scores_.begin(), scores_.end())) - unknown_penalty;
}

void UnigramModel::add_unknown(std::string_view piece, std::size_t begin, std::size_t end,
                               std::vector<ModelToken>& out) const {
    if (byte_fallback_) {
        std::vector<ModelToken> bytes;
        for (std::size_t b = begin; b < end; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(piece[b]));
            const std::optional<std::int32_t> id = vocab_.find(name);
            if (!id) break;
            bytes.push_back({*id, b, b + 1});
        }
        if (bytes.size() == end - begin) {
            out.insert(out.end(), bytes.begin(), bytes.end());
            return;
        }
    }
    if (unk_id_ < 0) {
        throw Error("no piece of the tokenizer covers " + std::string(piece.substr(begin, end - begin)) +
                    ", and its model has no unk_id");
    }
    if (!out.empty() && out.back().id == unk_id_ && out.back().end == begin) {
        out.back().end = end;   // a run of unknown characters is one unknown token
        return;
    }
    out.push_back({unk_id_, begin, end});
}

void UnigramModel::tokenize(std::string_view piece, std::vector<ModelToken>& out) const {
    const std::size_t n = piece.size();
    std::vector<Best> best(n + 1);
    best[0].score = 0.0;
    best[0].reached = true;
    const std::size_t longest = vocab_.longest();
    for (std::size_t at = 0; at < n;) {
        const std::size_t char_length = decode_char(piece, at).length;
        if (!best[at].reached) {
            at += char_length;
            continue;
        }
        bool one_char_piece = false;
        // Every piece that starts here, shortest first (a piece ends on a character's end).
        for (std::size_t end = at + char_length; end <= n && end - at <= longest;) {
            if (const std::optional<std::int32_t> id = vocab_.find(piece.substr(at, end - at))) {
                const double score = best[at].score + scores_[static_cast<std::size_t>(*id)];
                Best& there = best[end];
                if (!there.reached || score > there.score) there = {score, *id, at, true};
                one_char_piece = one_char_piece || end == at + char_length;
            }
            if (end == n) break;
            end += decode_char(piece, end).length;
        }
        if (!one_char_piece) {
            const double score = best[at].score + unk_score_;
            Best& there = best[at + char_length];
            if (!there.reached || score > there.score) there = {score, unk_id_, at, true};
        }
        at += char_length;
    }
    // Back from the end, then in order.
    std::vector<std::pair<std::size_t, std::size_t>> path;   // [begin, end) of each token
    for (std::size_t end = n; end > 0; end = best[end].begin) path.emplace_back(best[end].begin, end);
    std::reverse(path.begin(), path.end());
    for (const auto& [begin, end] : path) {
        const std::int32_t id = best[end].id;
        if (id == unk_id_) {
            add_unknown(piece, begin, end, out);
        } else {
            out.push_back({id, begin, end});
        }
    }
}

std::unique_ptr<TokenModel> read_unigram_model(const JsonField& field, ModelTables tables) {
    const JsonField list = field.at("vocab");
    std::vector<nlohmann::json> streamed = tables.scored ? std::move(*tables.scored) : std::vector<nlohmann::json>{};
    const std::size_t n = tables.scored ? streamed.size() : list.size();
    if (n > Vocabulary::max_entries) list.fail("more than " + std::to_string(Vocabulary::max_entries) + " pieces");
    Vocabulary vocab;
    std::vector<double> scores;
    scores.reserve(n);
    const std::string path = list.path();
    for (std::size_t i = 0; i < n; ++i) {
        const JsonField entry =
            tables.scored ? JsonField(streamed[i], json_child_path(path, i), list.file()) : list.at(i);
        if (entry.size() != 2 || !entry.value()[1].is_number()) entry.expected("a [piece, score] pair");
        std::string token = entry.at(0).string();
        const double score = entry.value()[1].get<double>();
        if (!std::isfinite(score)) entry.expected("a finite score");
        if (!vocab.add(std::move(token), static_cast<std::int32_t>(i))) {
            entry.fail("the piece " + json_brief(entry.value()[0]) + " is given twice");
        }
        scores.push_back(score);
    }
    if (n == 0) list.fail("no pieces");
    // null or absent: no unknown token (a character no piece covers is then refused)
    const auto unk = field.find("unk_id");
    const auto unk_id = unk ? static_cast<std::int32_t>(unk->integer(0, static_cast<std::int64_t>(n) - 1)) : -1;
    return std::make_unique<UnigramModel>(std::move(vocab), std::move(scores), unk_id,
                                          field.bool_or("byte_fallback", false));
}

}   // namespace headscope::tokenizer
