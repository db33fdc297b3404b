#pragma once
// GPT-2's byte-level BPE tokenizer, as Hugging Face folders store it: vocab.json +
// merges.txt, or one tokenizer.json. Text is cut into pieces by GPT-2's regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (implemented by hand over code points), each piece's UTF-8 bytes become printable
// characters (bytes_to_unicode: the space is 'Ġ', '\n' is 'Ċ'), and merges are applied
// lowest rank first until none applies. Every token keeps the byte span it came from.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace headscope {

struct BpeToken {
    std::int32_t id = 0;
    std::size_t begin = 0;   // byte span [begin, end) in the input text
    std::size_t end = 0;
    std::string label;   // as a person reads it: "Ġcat" shows as " cat"; see bpe_label
};

struct BpeOptions {
    // Prepend a space to text that does not start with one (RoBERTa-style folders); the
    // added space is not in the input, so the first token's span starts at 0.
    bool add_prefix_space = false;
    // Strings kept whole, with their own id, wherever they appear in the text (Hugging
    // Face's added tokens, e.g. "<|endoftext|>"); the text between them is encoded apart.
    std::vector<std::string> special_tokens;
};

// One merge rule "a b" (rank = its position in the list).
struct BpeMerge {
    std::string first;
    std::string second;
};

class BpeTokenizer {
public:
    // The most entries a vocabulary (and a merge list) may hold; larger files are refused
    // while parsing, before their tables are allocated.
    static constexpr std::size_t max_entries = 1'000'000;

    // GPT-2's files: vocab.json ({"token": id, ...}) and merges.txt ("#version" line, then
    // one "a b" per line, by rank). "<|endoftext|>", when in the vocabulary, is special.
    static BpeTokenizer from_files(const std::string& vocab_json_path, const std::string& merges_txt_path);
    // A Hugging Face tokenizer.json holding a byte-level BPE model: model.vocab,
    // model.merges ("a b" strings or ["a", "b"] pairs), added_tokens, ByteLevel options.
    static BpeTokenizer from_tokenizer_json(const std::string& path);

    // From tables in memory. `vocab_label` and `merge_label(i)` name where entries came
    // from in error messages (a file and field, a file and line).
    BpeTokenizer(const std::vector<std::pair<std::string, std::int32_t>>& vocab, const std::vector<BpeMerge>& merges,
                 BpeOptions options = {}, const std::string& vocab_label = "vocab",
                 const std::function<std::string(std::size_t)>& merge_label = {});

    // Throws headscope::Error on invalid UTF-8 (naming `label` and the byte), or when a
    // byte has no token in the vocabulary.
    std::vector<BpeToken> encode(std::string_view text, const std::string& label = "text") const;
    std::vector<std::int32_t> encode_ids(std::string_view text, const std::string& label = "text") const;
    // The bytes the ids stand for, exactly (decode(encode_ids(t)) == t); may be partial
    // UTF-8 when the ids end inside a character. Throws on an id not in the vocabulary.
    std::string decode(std::span<const std::int32_t> ids) const;

    std::size_t vocab_size() const { return token_count_; }
    std::size_t merge_count() const { return merge_count_; }
    bool has_id(std::int32_t id) const;
    const std::string& token(std::int32_t id) const;   // the vocabulary's form: "Ġcat"
    std::string label(std::int32_t id) const;          // as in BpeToken::label: " cat"
    std::optional<std::int32_t> find(std::string_view token) const;

private:
    struct Entry {
        std::string token;   // the vocabulary's form
        std::string bytes;   // the bytes it decodes to
        bool present = false;
    };
    struct MergeTarget {
        std::uint32_t rank;
        std::int32_t id;
    };

    // The vocabulary, by id (ids checked to lie in [0, max_id]).
    void add_vocab(const std::vector<std::pair<std::string, std::int32_t>>& vocab, std::int32_t max_id,
                   const std::string& vocab_label);
    // The merges, by the ids of their two halves; `merge_label` names merge i in messages.
    void add_merges(const std::vector<BpeMerge>& merges, const std::string& vocab_label,
                    const std::function<std::string(std::size_t)>& merge_label);
    void encode_piece(std::string_view text, std::size_t begin, std::size_t end, std::size_t offset, bool prefixed,
                      std::vector<BpeToken>& out) const;
    void encode_chunk(std::string_view chunk, std::size_t offset, std::vector<BpeToken>& out) const;

    std::vector<Entry> entries_;                                   // by id; holes have present = false
    std::unordered_map<std::string, std::int32_t> ids_;            // vocabulary form -> id
    std::unordered_map<std::uint64_t, MergeTarget> merges_;        // (left id, right id) -> rank, merged id
    std::vector<std::int32_t> byte_ids_;                           // [256] byte -> id of its one-byte token, -1 if none
    std::vector<std::pair<std::string, std::int32_t>> specials_;   // longest first
    BpeOptions options_;
    std::size_t token_count_ = 0;
    std::size_t merge_count_ = 0;
};

// GPT-2's bytes_to_unicode: the printable character that stands for each byte.
char32_t gpt2_byte_to_char(std::uint8_t byte);
// The inverse; nullopt for characters that stand for no byte.
std::optional<std::uint8_t> gpt2_char_to_byte(char32_t c);

// GPT-2's pre-tokenisation regex on valid UTF-8, as byte spans [begin, end). Whitespace is
// Unicode's White_Space (what \s means in Python's regex module): a run of whitespace
// before a word leaves its last character to the word (" ?\p{L}+" after "\s+(?!\S)").
std::vector<std::pair<std::size_t, std::size_t>> gpt2_pretokenize(std::string_view text,
                                                                  const std::string& label = "text");

// What a person reads for token bytes: complete UTF-8 characters as they are, control
// characters as \n, \t, \r or \x01, and bytes that are not a complete character as \xe2.
std::string bpe_label(std::string_view bytes);

}   // namespace headscope
