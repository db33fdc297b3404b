#include "core/text/tokenizer/bpe_model.h"

#include "core/base/error.h"
#include "core/base/json_file.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace headscope::tokenizer {

namespace {

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

std::string byte_token(unsigned byte) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    return name;
}

}   // namespace

BpeModel::BpeModel(Vocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeSettings settings, const std::function<std::string(std::size_t)>& merge_label)
    : vocab_(std::move(vocab)), settings_(std::move(settings)) {
    const std::size_t prefix_length = settings_.continuing_subword_prefix.size();
    std::size_t capacity = 64;
    while (capacity < merges.size() * 2) capacity *= 2;
    merges_.assign(capacity, MergeSlot{});
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [first, second] = merges[rank];
        const auto find = [&](const std::string& token) {
            const auto id = vocab_.find(token);
            if (!id) throw Error(merge_label(rank) + ": \"" + token + "\" is not in the vocabulary");
            return *id;
        };
        const std::int32_t left = find(first);
        const std::int32_t right = find(second);
        const std::string merged = first + second.substr(std::min(prefix_length, second.size()));
        const std::int32_t id = find(merged);
        add_merge(pair_key(left, right), Merge{static_cast<std::uint32_t>(rank), id});
    }
    if (settings_.unk_token) {
        unk_id_ = vocab_.find(*settings_.unk_token);
        if (!unk_id_) throw Error("unk_token \"" + *settings_.unk_token + "\" is not in the vocabulary");
    }
    for (unsigned b = 0; b < 256; ++b) byte_ids_[b] = vocab_.find(byte_token(b)).value_or(-1);
}

namespace {

std::size_t slot_hash(std::uint64_t key, std::size_t mask) { return (key * 0x9E3779B97F4A7C15ull >> 20) & mask; }

}   // namespace

void BpeModel::add_merge(std::uint64_t key, Merge merge) {
    const std::size_t mask = merges_.size() - 1;
    std::size_t at = slot_hash(key, mask);
    while (merges_[at].merge.id >= 0 && merges_[at].key != key) at = (at + 1) & mask;
    if (merges_[at].merge.id < 0) ++merge_count_;
    merges_[at] = {key, merge};   // a merge given twice keeps its later rank, as Hugging Face's map does
}

const BpeModel::Merge* BpeModel::find_merge(std::int32_t left, std::int32_t right) const {
    const std::uint64_t key = pair_key(left, right);
    const std::size_t mask = merges_.size() - 1;
    for (std::size_t at = slot_hash(key, mask);; at = (at + 1) & mask) {
        const MergeSlot& slot = merges_[at];
        if (slot.merge.id < 0) return nullptr;
        if (slot.key == key) return &slot.merge;
    }
}

std::size_t BpeModel::fewest_tokens(std::string_view piece) const {
    if (unk_id_ && settings_.fuse_unk) return 0;
    const std::size_t widest = std::max<std::size_t>(vocab_.longest(), 4);
    return (piece.size() + widest - 1) / widest;
}

std::vector<BpeModel::Symbol> BpeModel::initial_symbols(std::string_view piece) const {
    std::vector<Symbol> symbols;
    symbols.reserve(piece.size());
    std::optional<Symbol> unk;   // a pending unknown, fused with the next when fuse_unk
    std::string candidate;
    for (std::size_t at = 0; at < piece.size();) {
        const std::size_t length = decode_char(piece, at).length;
        const bool last = at + length == piece.size();
        candidate.clear();
        if (at > 0) candidate += settings_.continuing_subword_prefix;
        candidate.append(piece.substr(at, length));
        if (last) candidate += settings_.end_of_word_suffix;
        if (const auto id = vocab_.find(candidate)) {
            if (unk) symbols.push_back(*std::exchange(unk, std::nullopt));
            symbols.push_back({*id, at, at + length});
        } else if (settings_.byte_fallback && std::all_of(candidate.begin(), candidate.end(), [&](char b) {
                       return byte_ids_[static_cast<unsigned char>(b)] >= 0;
                   })) {
            // As Hugging Face: the bytes of the whole candidate, each its own token spanning the character.
            for (const char b : candidate)
                symbols.push_back({byte_ids_[static_cast<unsigned char>(b)], at, at + length});
        } else if (unk_id_) {
            if (unk && settings_.fuse_unk) {
                unk->end = at + length;
            } else {
                if (unk) symbols.push_back(*unk);
                unk = Symbol{*unk_id_, at, at + length};
            }
        }
        at += length;
    }
    if (unk) symbols.push_back(*unk);
    return symbols;
}

void BpeModel::merge(std::vector<Symbol>& symbols) const {
    struct Candidate {
        std::uint32_t rank;
        std::size_t pos;
        std::int32_t id;
        bool operator>(const Candidate& other) const {
            return rank != other.rank ? rank > other.rank : pos > other.pos;
        }
    };
    const std::size_t n = symbols.size();
    std::vector<std::ptrdiff_t> prev(n), next(n);
    std::vector<bool> alive(n, true);
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    for (std::size_t i = 0; i < n; ++i) {
        prev[i] = static_cast<std::ptrdiff_t>(i) - 1;
        next[i] = i + 1 < n ? static_cast<std::ptrdiff_t>(i + 1) : -1;
        if (i + 1 < n) {
            if (const Merge* m = find_merge(symbols[i].id, symbols[i + 1].id)) queue.push({m->rank, i, m->id});
        }
    }
    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        if (!alive[top.pos] || next[top.pos] < 0) continue;
        const auto right = static_cast<std::size_t>(next[top.pos]);
        const Merge* current = find_merge(symbols[top.pos].id, symbols[right].id);
        if (current == nullptr || current->id != top.id) continue;   // stale entry
        symbols[top.pos].id = top.id;
        symbols[top.pos].end = symbols[right].end;
        alive[right] = false;
        next[top.pos] = next[right];
        if (next[right] >= 0) prev[static_cast<std::size_t>(next[right])] = static_cast<std::ptrdiff_t>(top.pos);
        if (prev[top.pos] >= 0) {
            const auto p = static_cast<std::size_t>(prev[top.pos]);
            if (const Merge* m = find_merge(symbols[p].id, symbols[top.pos].id)) queue.push({m->rank, p, m->id});
        }
        if (next[top.pos] >= 0) {
            const auto q = static_cast<std::size_t>(next[top.pos]);
            if (const Merge* m = find_merge(symbols[top.pos].id, symbols[q].id)) queue.push({m->rank, top.pos, m->id});
        }
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (alive[i]) symbols[kept++] = symbols[i];
    }
    symbols.resize(kept);
}

void BpeModel::tokenize(std::string_view piece, std::vector<ModelToken>& out) const {
    if (piece.empty()) return;
    if (settings_.ignore_merges) {
        if (const auto id = vocab_.find(piece)) {
            out.push_back({*id, 0, piece.size()});
            return;
        }
    }
    std::vector<Symbol> symbols = initial_symbols(piece);
    merge(symbols);
    for (const Symbol& s : symbols) out.push_back({s.id, s.begin, s.end});
}

std::pair<std::string, std::string> read_merge(const JsonField& merge) {
    const auto& value = merge.value();
    if (value.is_string()) {
        const auto& text = value.get_ref<const std::string&>();
        const auto space = text.find(' ');
        if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
            merge.expected("\"a b\" (two tokens and one space)");
        }
        return {text.substr(0, space), text.substr(space + 1)};
    }
    if (value.is_array() && value.size() == 2 && value[0].is_string() && value[1].is_string()) {
        return {value[0].get_ref<const std::string&>(), value[1].get_ref<const std::string&>()};
    }
    merge.expected("\"a b\" or [\"a\", \"b\"]");
}

std::unique_ptr<TokenModel> read_bpe_model(const JsonField& field, ModelTables tables) {
    if (const auto dropout = field.find("dropout")) {
        if (!dropout->value().is_number() || dropout->value().get<double>() != 0.0) {
            dropout->expected("null or 0 (dropout makes the ids random)");
        }
    }
    BpeSettings settings;
    if (const auto unk = field.find("unk_token")) settings.unk_token = unk->string();
    settings.continuing_subword_prefix = field.string_or("continuing_subword_prefix", "");
    settings.end_of_word_suffix = field.string_or("end_of_word_suffix", "");
    settings.fuse_unk = field.bool_or("fuse_unk", false);
    settings.byte_fallback = field.bool_or("byte_fallback", false);
    settings.ignore_merges = field.bool_or("ignore_merges", false);

    Vocabulary vocab = tables.vocab ? std::move(*tables.vocab) : Vocabulary::read(field.at("vocab"));
    const JsonField list = field.at("merges");
    std::vector<std::pair<std::string, std::string>> merges;
    if (tables.merges) {
        merges = std::move(*tables.merges);
    } else {
        const std::size_t count = list.size();
        if (count > Vocabulary::max_entries) {
            list.fail(std::to_string(count) + " merges, more than " + std::to_string(Vocabulary::max_entries));
        }
        merges.reserve(count);
        for (std::size_t i = 0; i < count; ++i) merges.push_back(read_merge(list.at(i)));
    }
    const std::string& file = field.file();
    const std::string path = list.path();
    const auto label = [&](std::size_t i) { return file + ": " + json_child_path(path, i); };
    try {
        return std::make_unique<BpeModel>(std::move(vocab), merges, std::move(settings), label);
    } catch (const Error& e) {
        const std::string what = e.what();
        if (what.starts_with("unk_token")) field.at("unk_token").fail(what.substr(std::string("unk_token ").size()));
        throw;
    }
}

}   // namespace headscope::tokenizer
