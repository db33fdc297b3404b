#include "core/text/tokenizer/siglip_tokenizer.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/base/json_file.h"
#include "core/text/text.h"
#include "core/text/tokenizer/decoders.h"
#include "core/text/tokenizer/normalizers.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <filesystem>

namespace headscope::tokenizer {

namespace {

constexpr char32_t word_start = 0x2581;   // "▁"

// Python's str.isspace, which re's \s and str.strip() use: Unicode White_Space and the
// information separators U+001C..U+001F.
bool is_python_space(char32_t c) { return is_white_space(c) || (c >= 0x1c && c <= 0x1f); }

// Python's string.punctuation.
bool is_ascii_punctuation(char32_t c) {
    return c < 0x80 &&
           std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(static_cast<char>(c)) != std::string_view::npos;
}

// SiglipTokenizer.canonicalize_text: punctuation removed, whitespace runs one space, stripped.
void canonicalize(NormalizedText& text) {
    bool in_space = false;
    text.rewrite_chars([&](char32_t c, Span span, NormalizedText::Builder& out) {
        if (is_ascii_punctuation(c)) return;
        if (is_python_space(c)) {
            if (!in_space) out.add(' ', span);
            in_space = true;
            return;
        }
        in_space = false;
        out.add(c, span);
    });
    const std::string& s = text.text();
    const std::size_t begin = s.find_first_not_of(' ');
    if (begin == std::string::npos) {
        text.keep(0, 0);
        return;
    }
    text.keep(begin, s.find_last_not_of(' ') + 1);
}

// Bytes [begin, end) of `s` without the Python whitespace at the start (`left`) or end.
std::pair<std::size_t, std::size_t> strip_side(std::string_view s, std::size_t begin, std::size_t end, bool left) {
    if (left) {
        while (begin < end) {
            const DecodedChar d = decode_char(s, begin);
            if (!is_python_space(d.c)) break;
            begin += d.length;
        }
    } else {
        while (end > begin) {
            const std::size_t last = begin + last_char_start(s.substr(begin, end - begin));
            if (!is_python_space(decode_char(s, last).c)) break;
            end = last;
        }
    }
    return {begin, end};
}

// Llama 2's decoder, which reads SentencePiece pieces: "▁" a space, byte pieces their bytes.
const nlohmann::json& piece_decoder() {
    static const nlohmann::json decoder = {
        {"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
    return decoder;
}

Tokenizer read_pieces(const std::string& spiece_model) {
    const std::string bytes = read_file_bytes(spiece_model, max_sentencepiece_file_bytes, "a SentencePiece model");
    TokenizerParts parts;
    parts.model =
        std::make_unique<SentencePieceModel>(bytes, spiece_model, SentencePieceOptions{.add_dummy_prefix = false});
    parts.decoder = read_decoder(JsonField(piece_decoder(), "decoder", spiece_model));
    return Tokenizer(std::move(parts), spiece_model);
}

// tokenizer_config.json's special token: "</s>" or {"content": "</s>", ...}.
std::string special_text(const JsonField& config, std::string_view key, const std::string& fallback) {
    const auto field = config.find(key);
    if (!field) return fallback;
    if (field->value().is_string()) return field->string();
    if (field->value().is_object()) return field->at("content").string();
    field->expected("a string or {\"content\": ...}");
}

}   // namespace

SiglipTokenizer::SiglipTokenizer(const std::string& spiece_model, const std::string& tokenizer_config)
    : pieces_(read_pieces(spiece_model)), model_(dynamic_cast<const SentencePieceModel*>(&pieces_.model())) {
    std::string eos = "</s>";
    std::string pad = "</s>";
    std::vector<std::string> additional;
    if (!tokenizer_config.empty()) {
        const nlohmann::json root = read_json_file(tokenizer_config, "a tokenizer config", tokenizer_limits());
        const JsonField config(root, "", tokenizer_config);
        if (!root.is_object()) config.expected("a JSON object");
        lower_case_ = config.bool_or("do_lower_case", true);
        if (const auto field = config.find("model_max_length")) {
            max_length_ = static_cast<std::size_t>(field->integer(1, 1 << 20));
        }
        eos = special_text(config, "eos_token", eos);
        pad = special_text(config, "pad_token", pad);
        unk_text_ = special_text(config, "unk_token", unk_text_);
        if (const auto field = config.find("additional_special_tokens")) {
            for (std::size_t i = 0; i < field->size(); ++i) additional.push_back(field->at(i).string());
        }
    }
    const std::string where = tokenizer_config.empty() ? spiece_model : tokenizer_config;
    const auto id_of = [&](const std::string& text, const char* role) {
        const auto id = pieces_.find(text);
        if (!id)
            throw Error(where + ": the " + std::string(role) + " \"" + text + "\" is not a piece of " + spiece_model);
        return *id;
    };
    eos_id_ = id_of(eos, "eos_token");
    pad_id_ = id_of(pad, "pad_token");
    for (const std::string& text : {eos, unk_text_}) special_.emplace_back(text, id_of(text, "special token"));
    for (const std::string& text : additional) special_.emplace_back(text, id_of(text, "additional special token"));
    for (std::size_t i = 0; i < special_.size(); ++i) special_matcher_.add(special_[i].first, i);
    if (const auto id = pieces_.find("\u2581")) word_start_id_ = *id;
    std::vector<ModelToken> unk;
    model_->tokenize(unk_text_, unk);
    unk_pieces_ = unk.size();
}

std::vector<EncodedToken> SiglipTokenizer::encode_stretch(const NormalizedText& stretch) const {
    NormalizedText text = stretch;
    canonicalize(text);
    std::vector<ModelToken> pieces;
    model_->tokenize(unk_text_ + text.text(), pieces);
    // The pieces "<unk>" alone makes are dropped, where there are that many (as transformers).
    const std::size_t first = pieces.size() >= unk_pieces_ ? unk_pieces_ : 0;
    const std::size_t prefix = unk_text_.size();
    const std::size_t size = text.text().size();
    for (std::size_t i = first; i < pieces.size(); ++i) {
        pieces[i].begin = std::min(std::max(pieces[i].begin, prefix) - prefix, size);
        pieces[i].end = std::min(std::max(pieces[i].end, prefix) - prefix, size);
    }
    // Byte fallback: SentencePiece gives a character's bytes but the last an empty span at
    // its start; each takes the character's, as its last byte has it.
    for (std::size_t i = pieces.size(); i-- > first + 1;) {
        ModelToken& before = pieces[i - 1];
        if (before.begin == before.end && pieces[i].begin == before.begin) before.end = pieces[i].end;
    }
    std::vector<EncodedToken> tokens;
    for (std::size_t i = first; i < pieces.size(); ++i) {
        const Span span = text.original_span(pieces[i].begin, pieces[i].end);
        tokens.push_back({pieces[i].id, span.begin, span.end, false});
    }
    return tokens;
}

bool is_siglip_tokenizer_folder(const std::string& folder) {
    const std::filesystem::path dir(folder);
    std::error_code ec;
    if (!std::filesystem::exists(dir / "spiece.model", ec) ||
        !std::filesystem::exists(dir / "tokenizer_config.json", ec)) {
        return false;
    }
    const std::string config = (dir / "tokenizer_config.json").string();
    const nlohmann::json root = read_json_file(config, "a tokenizer config", tokenizer_limits());
    const auto found = root.is_object() ? root.find("tokenizer_class") : root.end();
    return found != root.end() && *found == "SiglipTokenizer";
}

std::vector<EncodedToken> SiglipTokenizer::encode(std::string_view input, const std::string& label,
                                                  bool add_special_tokens, bool pad) const {
    validate_utf8(input, label);
    NormalizedText text(input, 0);
    text.rewrite_chars(
        [](char32_t c, Span span, NormalizedText::Builder& out) { out.add(c == word_start ? ' ' : c, span); });
    text.prepend("\u2581");
    // Every special token is lower-case text, so lower-casing all of it is lower-casing around them.
    if (lower_case_) lowercase(text);
    const std::string_view s = text.text();
    std::vector<EncodedToken> tokens;
    std::size_t stretch_begin = 0;
    bool strip_left = false;   // the special token before has rstrip: the stretch loses its leading spaces
    const auto add_stretch = [&](std::size_t end, bool strip_right) {
        const std::size_t b = strip_left ? strip_side(s, stretch_begin, end, true).first : stretch_begin;
        const std::size_t e = strip_right ? strip_side(s, b, end, false).second : end;
        if (b < e) {
            for (const EncodedToken& t : encode_stretch(text.slice(b, e))) tokens.push_back(t);
        }
    };
    for (std::size_t at = 0; at < s.size();) {
        const auto found = special_matcher_.longest_at(s, at);
        if (!found) {
            ++at;
            continue;
        }
        add_stretch(at, true);
        const Span span = text.original_span(at, at + found->second);
        tokens.push_back({special_[found->first].second, span.begin, span.end, true});
        at += found->second;
        stretch_begin = at;
        strip_left = true;
    }
    add_stretch(s.size(), false);
    if (tokens.size() > 1 && tokens[0].id == word_start_id_ && tokens[1].special) tokens.erase(tokens.begin());
    if (add_special_tokens && (tokens.empty() || tokens.back().id != eos_id_)) {
        tokens.push_back({eos_id_, input.size(), input.size(), true});
    }
    while (pad && tokens.size() < max_length_) tokens.push_back({pad_id_, input.size(), input.size(), true});
    return tokens;
}

}   // namespace headscope::tokenizer
