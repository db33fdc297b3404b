#pragma once
// The normalizers of tokenizer.json ("normalizer": {...}): Unicode forms (NFC, NFD, NFKC,
// NFKD), Lowercase, Strip, Replace, Prepend, BertNormalizer, Precompiled (SentencePiece's
// rules: precompiled_charsmap.h) and Sequence. Each rewrites a
// NormalizedText in place, keeping every character's original span.

#include "core/text/tokenizer/json_field.h"
#include "core/text/tokenizer/normalized_text.h"

#include <memory>
#include <string>

namespace headscope::tokenizer {

class Normalizer {
public:
    virtual ~Normalizer() = default;
    virtual void normalize(NormalizedText& text) const = 0;
};

// From its JSON; refused naming the field when the type is unknown or a field is wrong.
std::unique_ptr<Normalizer> read_normalizer(const JsonField& field);

// BERT's normalizer (also what a vocab.txt folder gets): drop control characters,
// whitespace to spaces, spaces around CJK ideographs, strip accents, lower-case.
struct BertNormalizerOptions {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    std::optional<bool> strip_accents;   // unset: as lowercase
    bool lowercase = true;
};
std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options);

// Unicode normalization of a string on its own (used for added tokens' text too).
enum class UnicodeForm { nfc, nfd, nfkc, nfkd };
void normalize_unicode(NormalizedText& text, UnicodeForm form);
void lowercase(NormalizedText& text);

}   // namespace headscope::tokenizer
