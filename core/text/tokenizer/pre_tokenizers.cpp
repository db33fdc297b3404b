#include "core/text/tokenizer/pre_tokenizers.h"

#include "core/text/tokenizer/byte_level.h"
#include "core/text/tokenizer/split_pattern.h"
#include "core/text/tokenizer/unicode_chars.h"

#include <utf8proc.h>

namespace headscope::tokenizer {

namespace {

// Replaces each piece not yet tokenized by what `cut` makes of it, dropping empty ones.
template <typename Cut>
void split_pieces(std::vector<Piece>& pieces, Cut&& cut) {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (Piece& piece : pieces) {
        if (piece.added_id) {
            out.push_back(std::move(piece));
            continue;
        }
        for (NormalizedText& part : cut(std::move(piece.text))) {
            if (!part.empty()) out.push_back(Piece{std::move(part), std::nullopt});
        }
    }
    pieces = std::move(out);
}

bool is_numeric(char32_t c) {
    const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

class ByteLevelPreTokenizer : public PreTokenizer {
public:
    ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
        : add_prefix_space_(add_prefix_space),
          regex_(use_regex ? std::optional(SplitPattern::regex(gpt2_split_pattern, "ByteLevel")) : std::nullopt) {}

    void pre_tokenize(std::vector<Piece>& pieces) const override {
        split_pieces(pieces, [&](NormalizedText text) {
            if (add_prefix_space_ && text.text().front() != ' ') text.prepend(" ");
            if (!regex_) return std::vector<NormalizedText>{std::move(text)};
            return split_text(text, regex_->stretches(text.text()), SplitBehavior::isolated);
        });
        // Every byte becomes the printable character that stands for it.
        for (Piece& piece : pieces) {
            if (piece.added_id) continue;
            NormalizedText::Builder out;
            const std::string& s = piece.text.text();
            for (std::size_t at = 0; at < s.size();) {
                const std::size_t length = decode_char(s, at).length;
                const Span span = piece.text.char_span(at);
                // A character as typed maps byte for byte, so a token ending inside it spans its bytes.
                const bool as_typed = span.end - span.begin == length;
                for (std::size_t k = 0; k < length; ++k) {
                    const auto b = static_cast<std::uint32_t>(k);
                    out.add(byte_level_char(static_cast<std::uint8_t>(s[at + k])),
                            as_typed ? Span{span.begin + b, span.begin + b + 1} : span);
                }
                at += length;
            }
            piece.text.assign(std::move(out));
        }
    }

private:
    bool add_prefix_space_;
    std::optional<SplitPattern> regex_;
};

class SplitPreTokenizer : public PreTokenizer {
public:
    SplitPreTokenizer(SplitPattern pattern, SplitBehavior behavior, bool invert)
        : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
    void pre_tokenize(std::vector<Piece>& pieces) const override {
        split_pieces(pieces, [&](const NormalizedText& text) {
            return split_text(text, pattern_.stretches(text.text()), behavior_, invert_);
        });
    }

private:
    SplitPattern pattern_;
    SplitBehavior behavior_;
    bool invert_;
};

// Splits on a character class.
class CharSplitPreTokenizer : public PreTokenizer {
public:
    CharSplitPreTokenizer(bool (*is_match)(char32_t), SplitBehavior behavior)
        : is_match_(is_match), behavior_(behavior) {}
    void pre_tokenize(std::vector<Piece>& pieces) const override {
        split_pieces(pieces, [&](const NormalizedText& text) {
            return split_text(text, stretches_of(text.text(), is_match_), behavior_);
        });
    }

private:
    bool (*is_match_)(char32_t);
    SplitBehavior behavior_;
};

enum class PrependScheme { first, always, never };

class MetaspacePreTokenizer : public PreTokenizer {
public:
    MetaspacePreTokenizer(char32_t replacement, PrependScheme scheme, bool split)
        : replacement_(utf8_of(replacement)), scheme_(scheme), split_(split) {}
    void pre_tokenize(std::vector<Piece>& pieces) const override {
        split_pieces(pieces, [&](NormalizedText text) {
            text.rewrite_chars([&](char32_t c, Span span, NormalizedText::Builder& out) {
                if (c == ' ') {
                    out.add_bytes(replacement_, span);
                } else {
                    out.add(c, span);
                }
            });
            const bool starts = text.text().starts_with(replacement_);
            if (!starts &&
                (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && text.whole().begin == 0))) {
                text.prepend(replacement_);
            }
            if (!split_) return std::vector<NormalizedText>{std::move(text)};
            const auto stretches = SplitPattern::literal(replacement_).stretches(text.text());
            return split_text(text, stretches, SplitBehavior::merged_with_next);
        });
    }

private:
    std::string replacement_;
    PrependScheme scheme_;
    bool split_;
};

class SequencePreTokenizer : public PreTokenizer {
public:
    explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
    void pre_tokenize(std::vector<Piece>& pieces) const override {
        for (const auto& step : steps_) step->pre_tokenize(pieces);
    }

private:
    std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

SplitBehavior read_behavior(const JsonField& field) {
    const std::string name = field.string();
    if (name == "Removed") return SplitBehavior::removed;
    if (name == "Isolated") return SplitBehavior::isolated;
    if (name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
    if (name == "MergedWithNext") return SplitBehavior::merged_with_next;
    if (name == "Contiguous") return SplitBehavior::contiguous;
    field.expected("one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

std::unique_ptr<PreTokenizer> read_split(const JsonField& field) {
    const JsonField pattern = field.at("pattern");
    SplitPattern compiled = [&] {
        if (const auto regex = pattern.find("Regex")) {
            return SplitPattern::regex(regex->string(), regex->file() + ": " + regex->path());
        }
        if (const auto literal = pattern.find("String")) return SplitPattern::literal(literal->string());
        pattern.expected("{\"String\": ...} or {\"Regex\": ...}");
    }();
    return std::make_unique<SplitPreTokenizer>(std::move(compiled), read_behavior(field.at("behavior")),
                                               field.bool_or("invert", false));
}

std::unique_ptr<PreTokenizer> read_metaspace(const JsonField& field) {
    const std::string replacement = field.string_or("replacement", "\u2581");
    if (replacement.empty() || decode_char(replacement, 0).length != replacement.size()) {
        field.at("replacement").expected("one character");
    }
    PrependScheme scheme = PrependScheme::always;
    if (const auto name = field.find("prepend_scheme")) {
        const std::string s = name->string();
        if (s == "first") {
            scheme = PrependScheme::first;
        } else if (s == "always") {
            scheme = PrependScheme::always;
        } else if (s == "never") {
            scheme = PrependScheme::never;
        } else {
            name->expected("one of first, always, never");
        }
    }
    if (!field.bool_or("add_prefix_space", true)) scheme = PrependScheme::never;
    return std::make_unique<MetaspacePreTokenizer>(decode_char(replacement, 0).c, scheme, field.bool_or("split", true));
}

}   // namespace

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space) {
    return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, true);
}

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    steps.push_back(std::make_unique<CharSplitPreTokenizer>(is_white_space, SplitBehavior::removed));
    steps.push_back(std::make_unique<CharSplitPreTokenizer>(is_punctuation, SplitBehavior::isolated));
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
}

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonField& field) {
    const std::string type = field.type();
    if (type == "ByteLevel") {
        return std::make_unique<ByteLevelPreTokenizer>(field.bool_or("add_prefix_space", true),
                                                       field.bool_or("use_regex", true));
    }
    if (type == "Split") return read_split(field);
    if (type == "Metaspace") return read_metaspace(field);
    if (type == "Digits") {
        const auto behavior =
            field.bool_or("individual_digits", false) ? SplitBehavior::isolated : SplitBehavior::contiguous;
        return std::make_unique<CharSplitPreTokenizer>(is_numeric, behavior);
    }
    if (type == "Punctuation") {
        const auto behavior = field.find("behavior") ? read_behavior(field.at("behavior")) : SplitBehavior::isolated;
        return std::make_unique<CharSplitPreTokenizer>(is_punctuation, behavior);
    }
    if (type == "Whitespace") {
        return std::make_unique<SplitPreTokenizer>(SplitPattern::regex(R"(\w+|[^\w\s]+)", "Whitespace"),
                                                   SplitBehavior::removed, true);
    }
    if (type == "WhitespaceSplit")
        return std::make_unique<CharSplitPreTokenizer>(is_white_space, SplitBehavior::removed);
    if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
    if (type == "Sequence")
        return std::make_unique<SequencePreTokenizer>(read_each(field, "pretokenizers", read_pre_tokenizer));
    field.at("type").fail("\"" + type +
                          "\" is not a pre-tokenizer this reader knows (ByteLevel, Split, Metaspace, "
                          "Digits, Punctuation, Whitespace, WhitespaceSplit, BertPreTokenizer, Sequence)");
}

}   // namespace headscope::tokenizer
