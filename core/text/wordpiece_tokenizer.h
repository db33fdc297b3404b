#pragma once
// BERT's WordPiece tokenizer from a Hugging Face folder's vocab.txt, as BertTokenizer
// does it. BasicTokenizer first: drop control characters and U+FFFD, split on
// whitespace, put each CJK ideograph apart, NFC, lower-case and strip accents (NFD, then
// drop the Mn marks) when asked, split off punctuation (ASCII 33-47, 58-64, 91-96, 123-126 and
// Unicode P*). Then each word is cut greedily into the longest pieces in the vocabulary,
// "##" marking a piece that continues a word; a word that cannot be cut, or that is longer
// than 100 characters, becomes [UNK]. encode() adds [CLS] ... [SEP] (and B [SEP] for pairs).
// Every token keeps the byte span of the input it came from.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace headscope {

struct WordPieceOptions {
    bool do_lower_case = true;            // tokenizer_config.json "do_lower_case"
    std::optional<bool> strip_accents;    // "strip_accents"; unset (null): strip when lower-casing
    bool tokenize_chinese_chars = true;   // "tokenize_chinese_chars"
    std::size_t max_input_chars_per_word = 100;
};

// A character of the text as the tokenizer transforms it, with the input bytes it came from.
struct WordPieceChar {
    char32_t c = 0;
    std::size_t begin = 0;
    std::size_t end = 0;
};

struct WordPieceToken {
    std::int32_t id = 0;
    std::int32_t type_id = 0;   // 0: [CLS], the text and its [SEP]; 1: the pair's text and the last [SEP]
    std::size_t begin = 0;      // byte span [begin, end) in its own text (text or text_pair, as type_id says);
    std::size_t end = 0;        // empty for the [CLS] and [SEP] that encode() adds
    std::string label;          // the piece as in the vocabulary: "play", "##ing", "[UNK]"
};

class WordPieceTokenizer {
public:
    static constexpr std::size_t max_entries = 1'000'000;

    // vocab.txt: one token per line, the id is the line number from 0. Needs [UNK], [CLS], [SEP].
    static WordPieceTokenizer from_file(const std::string& vocab_txt_path, WordPieceOptions options = {});
    // From a token list in memory (id = index); `label` names its source in error messages.
    explicit WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options = {},
                                const std::string& label = "vocab");

    // The pieces of one text, without [CLS]/[SEP]; all of type 0. Special tokens written in
    // the text ("[SEP]", case-sensitive) are kept whole, as Hugging Face does.
    std::vector<WordPieceToken> tokenize(std::string_view text, const std::string& label = "text") const;
    // [CLS] text [SEP]
    std::vector<WordPieceToken> encode(std::string_view text, const std::string& label = "text") const;
    // [CLS] text [SEP] text_pair [SEP], type ids 0 ... 0 1 ... 1.
    std::vector<WordPieceToken> encode_pair(std::string_view text, std::string_view text_pair) const;
    // The tokens joined by spaces with " ##" removed (Hugging Face's convert_tokens_to_string).
    std::string decode(std::span<const std::int32_t> ids) const;

    std::size_t vocab_size() const { return vocab_.size(); }
    const std::string& token(std::int32_t id) const;
    std::optional<std::int32_t> find(std::string_view token) const;
    const WordPieceOptions& options() const { return options_; }
    std::int32_t unk_id() const { return unk_id_; }
    std::int32_t cls_id() const { return cls_id_; }
    std::int32_t sep_id() const { return sep_id_; }

private:
    using Char = WordPieceChar;
    void tokenize_chunk(std::string_view text, std::size_t offset, std::vector<WordPieceToken>& out) const;
    void basic_word(std::vector<Char> word, std::vector<WordPieceToken>& out) const;
    void wordpiece(const std::vector<Char>& word, std::vector<WordPieceToken>& out) const;

    std::vector<std::string> vocab_;
    std::unordered_map<std::string, std::int32_t> ids_;
    std::vector<std::pair<std::string, std::int32_t>> specials_;   // found in the text, longest first
    WordPieceOptions options_;
    std::int32_t unk_id_ = 0, cls_id_ = 0, sep_id_ = 0;
};

}   // namespace headscope
