#include "core/text/bpe_tokenizer.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/text/text.h"

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <queue>
#include <unordered_set>

namespace headscope {

namespace {

using json = nlohmann::json;

constexpr std::uintmax_t max_file_bytes = 256u << 20;   // tokenizer.json of the largest vocabularies: ~20 MB
constexpr int max_json_depth = 32;

// bytes_to_unicode from GPT-2's encoder.py: printable Latin-1 bytes stand for
// themselves, the other 68 (controls, space, DEL, NBSP, soft hyphen) for U+0100 onwards.
constexpr std::array<char32_t, 256> make_byte_chars() {
    std::array<char32_t, 256> chars{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        chars[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return chars;
}
constexpr std::array<char32_t, 256> byte_chars = make_byte_chars();

constexpr std::array<std::int16_t, 256 + 68> make_char_bytes() {
    std::array<std::int16_t, 256 + 68> bytes{};
    for (auto& b : bytes) b = -1;
    for (int b = 0; b < 256; ++b) bytes[byte_chars[static_cast<std::size_t>(b)]] = static_cast<std::int16_t>(b);
    return bytes;
}
constexpr std::array<std::int16_t, 256 + 68> char_bytes = make_char_bytes();

std::string utf8_encode(char32_t c) {
    utf8proc_uint8_t buffer[4];
    const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buffer);
    return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

std::string hex_escape(unsigned value, int digits, const char* prefix) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%s%0*x", prefix, digits, value);
    return buffer;
}

std::string quote_token(std::string_view s) { return "\"" + bpe_label(s) + "\""; }

std::string read_text_file(const std::string& path) {
    return read_file_bytes(path, max_file_bytes, "a tokenizer file");
}

// Parses JSON, refusing while it parses: nesting deeper than max_json_depth, any object or
// array with more than BpeTokenizer::max_entries entries, and keys given twice (JSON keeps
// the last silently). Errors name the file and the field ("model.vocab").
json parse_json_file(const std::string& path) {
    const std::string text = read_text_file(path);
    struct Frame {
        std::string path;
        bool is_object = false;
        std::size_t count = 0;
        std::string last_key;
        std::unordered_set<std::string> keys;
    };
    std::vector<Frame> stack;
    const auto field = [&](const Frame& f) { return f.path.empty() ? std::string("the top level") : f.path; };
    const auto count_entry = [&](Frame& f) {
        if (++f.count > BpeTokenizer::max_entries) {
            throw Error(path + ": " + field(f) + " has more than " + std::to_string(BpeTokenizer::max_entries) +
                        " entries");
        }
    };
    const auto child_path = [&]() -> std::string {
        if (stack.empty()) return "";
        const Frame& parent = stack.back();
        if (parent.is_object) return parent.path.empty() ? parent.last_key : parent.path + "." + parent.last_key;
        return parent.path + "[" + std::to_string(parent.count) + "]";
    };
    const auto guard = [&](int, json::parse_event_t event, json& parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start: {
            if (stack.size() >= static_cast<std::size_t>(max_json_depth)) {
                throw Error(path + ": JSON nests deeper than " + std::to_string(max_json_depth) + " levels");
            }
            Frame f;
            f.path = child_path();
            f.is_object = event == json::parse_event_t::object_start;
            stack.push_back(std::move(f));
            break;
        }
        case json::parse_event_t::key: {
            Frame& f = stack.back();
            f.last_key = parsed.get<std::string>();
            if (!f.keys.insert(f.last_key).second) {
                throw Error(path + ": " + field(f) + ": key " + quote_token(f.last_key) + " is given twice");
            }
            count_entry(f);
            break;
        }
        case json::parse_event_t::value:
            if (!stack.empty() && !stack.back().is_object) count_entry(stack.back());
            break;
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            stack.pop_back();
            if (!stack.empty() && !stack.back().is_object) count_entry(stack.back());
            break;
        }
        return true;
    };
    try {
        return json::parse(text, guard);
    } catch (const json::exception& e) {
        throw Error(path + ": not valid JSON (" + e.what() + ")");
    }
}

// A vocabulary object {"token": id, ...} as (token, id) pairs, ids checked for type and range.
std::vector<std::pair<std::string, std::int32_t>> vocab_entries(const json& object, const std::string& label) {
    if (!object.is_object()) throw Error(label + ": expected an object {\"token\": id, ...}");
    std::vector<std::pair<std::string, std::int32_t>> entries;
    entries.reserve(object.size());
    for (const auto& [token, value] : object.items()) {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
            value.get<std::int64_t>() >= static_cast<std::int64_t>(BpeTokenizer::max_entries)) {
            throw Error(label + ": " + quote_token(token) + " has id " + value.dump() +
                        "; ids must be integers in [0, " + std::to_string(BpeTokenizer::max_entries) + ")");
        }
        entries.emplace_back(token, static_cast<std::int32_t>(value.get<std::int64_t>()));
    }
    return entries;
}

// "a b" -> {a, b}: exactly one space, two non-empty parts (as Hugging Face's tokenizers).
std::optional<BpeMerge> split_merge(std::string_view line) {
    const auto space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size()) return std::nullopt;
    if (line.find(' ', space + 1) != std::string_view::npos) return std::nullopt;
    return BpeMerge{std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
}

const json* member(const json& object, const char* key) {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

// GPT-2's regex classes: letters (\p{L}), numbers (\p{N}), White_Space (\s), the rest.
enum class Class : std::uint8_t { letter, number, space, other };

Class classify(utf8proc_int32_t c) {
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return Class::letter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return Class::number;
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: return Class::space;
    case UTF8PROC_CATEGORY_CC:
        // White_Space among the controls: \t \n \v \f \r and NEL (U+0085).
        return (c >= 0x09 && c <= 0x0D) || c == 0x85 ? Class::space : Class::other;
    default: return Class::other;
    }
}

}   // namespace

char32_t gpt2_byte_to_char(std::uint8_t byte) { return byte_chars[byte]; }

std::optional<std::uint8_t> gpt2_char_to_byte(char32_t c) {
    if (c >= char_bytes.size() || char_bytes[c] < 0) return std::nullopt;
    return static_cast<std::uint8_t>(char_bytes[c]);
}

std::string bpe_label(std::string_view bytes) {
    std::string out;
    const auto* data = reinterpret_cast<const utf8proc_uint8_t*>(bytes.data());
    for (std::size_t at = 0; at < bytes.size();) {
        utf8proc_int32_t c = 0;
        const auto n = utf8proc_iterate(data + at, static_cast<utf8proc_ssize_t>(bytes.size() - at), &c);
        if (n <= 0) {
            out += hex_escape(static_cast<unsigned char>(bytes[at]), 2, "\\x");
            ++at;
            continue;
        }
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7F) {
            out += hex_escape(static_cast<unsigned>(c), 2, "\\x");
        } else if (c >= 0x80 && c < 0xA0) {
            out += hex_escape(static_cast<unsigned>(c), 4, "\\u");   // C1 controls, e.g. NEL \u0085
        } else {
            out.append(bytes.substr(at, static_cast<std::size_t>(n)));
        }
        at += static_cast<std::size_t>(n);
    }
    return out;
}

std::vector<std::pair<std::size_t, std::size_t>> gpt2_pretokenize(std::string_view text, const std::string& label) {
    validate_utf8(text, label);
    struct CodePoint {
        utf8proc_int32_t c;
        std::size_t begin;
        Class cls;
    };
    std::vector<CodePoint> cps;
    const auto* data = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
    for (std::size_t at = 0; at < text.size();) {
        utf8proc_int32_t c = 0;
        const auto n = utf8proc_iterate(data + at, static_cast<utf8proc_ssize_t>(text.size() - at), &c);
        cps.push_back({c, at, classify(c)});
        at += static_cast<std::size_t>(n);
    }
    const std::size_t n = cps.size();
    const auto byte_at = [&](std::size_t i) { return i < n ? cps[i].begin : text.size(); };
    const auto run_end = [&](std::size_t i, Class cls) {
        while (i < n && cps[i].cls == cls) ++i;
        return i;
    };
    const auto is = [&](std::size_t i, utf8proc_int32_t c) { return i < n && cps[i].c == c; };

    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    std::size_t i = 0;
    while (i < n) {
        std::size_t end = i;
        if (cps[i].c == '\'' && (is(i + 1, 's') || is(i + 1, 't') || is(i + 1, 'm') || is(i + 1, 'd'))) {
            end = i + 2;   // 's 't 'm 'd (lower case only, as the regex)
        } else if (cps[i].c == '\'' && ((is(i + 1, 'r') && is(i + 2, 'e')) || (is(i + 1, 'v') && is(i + 2, 'e')) ||
                                        (is(i + 1, 'l') && is(i + 2, 'l')))) {
            end = i + 3;   // 're 've 'll
        } else if (cps[i].cls != Class::space || (cps[i].c == ' ' && i + 1 < n && cps[i + 1].cls != Class::space)) {
            // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional U+0020, then a run of one class.
            const std::size_t first = cps[i].cls == Class::space ? i + 1 : i;
            end = run_end(first, cps[first].cls);
        } else {
            // A run of whitespace: "\s+(?!\S)" takes it all at the end of the text, else all
            // but its last character (left to the word after it); a single one is "\s+".
            const std::size_t stop = run_end(i, Class::space);
            end = (stop == n || stop - i == 1) ? stop : stop - 1;
        }
        pieces.emplace_back(byte_at(i), byte_at(end));
        i = end;
    }
    return pieces;
}

namespace {

// The bytes a vocabulary token decodes to: each character stands for one byte; a
// character outside GPT-2's byte alphabet (only in added or hand-made tokens) stands for
// its own UTF-8 bytes.
std::string token_bytes(const std::string& token) {
    std::string bytes;
    const auto* data = reinterpret_cast<const utf8proc_uint8_t*>(token.data());
    for (std::size_t at = 0; at < token.size();) {
        utf8proc_int32_t c = 0;
        const auto n = utf8proc_iterate(data + at, static_cast<utf8proc_ssize_t>(token.size() - at), &c);
        const auto byte = gpt2_char_to_byte(static_cast<char32_t>(c));
        if (byte) {
            bytes += static_cast<char>(*byte);
        } else {
            bytes.append(token, at, static_cast<std::size_t>(n));
        }
        at += static_cast<std::size_t>(n);
    }
    return bytes;
}

// Refuses an empty or oversized vocabulary or merge list and an id out of range; returns
// the largest id.
std::int32_t check_vocab_size(const std::vector<std::pair<std::string, std::int32_t>>& vocab, std::size_t n_merges,
                              const std::string& vocab_label) {
    if (vocab.empty()) throw Error(vocab_label + ": the vocabulary is empty");
    if (vocab.size() > BpeTokenizer::max_entries) {
        throw Error(vocab_label + ": " + std::to_string(vocab.size()) + " entries, more than " +
                    std::to_string(BpeTokenizer::max_entries));
    }
    if (n_merges > BpeTokenizer::max_entries) {
        throw Error(vocab_label + ": " + std::to_string(n_merges) + " merges, more than " +
                    std::to_string(BpeTokenizer::max_entries));
    }
    std::int32_t max_id = 0;
    for (const auto& [token, id] : vocab) {
        if (id < 0 || static_cast<std::size_t>(id) >= BpeTokenizer::max_entries) {
            throw Error(vocab_label + ": " + quote_token(token) + " has id " + std::to_string(id) +
                        "; ids must be in [0, " + std::to_string(BpeTokenizer::max_entries) + ")");
        }
        max_id = std::max(max_id, id);
    }
    return max_id;
}

}   // namespace

BpeTokenizer::BpeTokenizer(const std::vector<std::pair<std::string, std::int32_t>>& vocab,
                           const std::vector<BpeMerge>& merges, BpeOptions options, const std::string& vocab_label,
                           const std::function<std::string(std::size_t)>& merge_label)
    : options_(std::move(options)) {
    const std::int32_t max_id = check_vocab_size(vocab, merges.size(), vocab_label);
    add_vocab(vocab, max_id, vocab_label);
    byte_ids_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
        const auto it = ids_.find(utf8_encode(byte_chars[static_cast<std::size_t>(b)]));
        if (it != ids_.end()) byte_ids_[static_cast<std::size_t>(b)] = it->second;
    }
    add_merges(merges, vocab_label, merge_label);
    for (const auto& special : options_.special_tokens) {
        const auto it = ids_.find(special);
        if (it == ids_.end()) throw Error(vocab_label + ": special token " + quote_token(special) + " has no id");
        specials_.emplace_back(special, it->second);
    }
    std::stable_sort(specials_.begin(), specials_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

void BpeTokenizer::add_vocab(const std::vector<std::pair<std::string, std::int32_t>>& vocab, std::int32_t max_id,
                             const std::string& vocab_label) {
    entries_.resize(static_cast<std::size_t>(max_id) + 1);
    ids_.reserve(vocab.size());
    for (const auto& [token, id] : vocab) {
        if (token.empty()) throw Error(vocab_label + ": id " + std::to_string(id) + " has an empty token");
        Entry& entry = entries_[static_cast<std::size_t>(id)];
        if (entry.present) {
            throw Error(vocab_label + ": id " + std::to_string(id) + " is given to both " + quote_token(entry.token) +
                        " and " + quote_token(token));
        }
        if (!ids_.emplace(token, id).second) throw Error(vocab_label + ": " + quote_token(token) + " is listed twice");
        validate_utf8(token, vocab_label + ": token " + std::to_string(id));
        entry.token = token;
        entry.present = true;
        entry.bytes = token_bytes(token);
    }
    token_count_ = vocab.size();
}

void BpeTokenizer::add_merges(const std::vector<BpeMerge>& merges, const std::string& vocab_label,
                              const std::function<std::string(std::size_t)>& merge_label) {
    const auto where = [&](std::size_t i) { return merge_label ? merge_label(i) : "merge " + std::to_string(i); };
    merges_.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const auto lookup = [&](const std::string& token) {
            const auto it = ids_.find(token);
            if (it == ids_.end()) {
                throw Error(where(i) + ": " + quote_token(token) + " (merge " +
                            quote_token(merges[i].first + " " + merges[i].second) + ") is not in the vocabulary (" +
                            vocab_label + ")");
            }
            return it->second;
        };
        const std::int32_t left = lookup(merges[i].first);
        const std::int32_t right = lookup(merges[i].second);
        const std::int32_t merged = lookup(merges[i].first + merges[i].second);
        const std::uint64_t key =
            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
        // A pair listed twice keeps its last rank, as Hugging Face's loaders do.
        merges_.insert_or_assign(key, MergeTarget{static_cast<std::uint32_t>(i), merged});
    }
    merge_count_ = merges.size();
}

BpeTokenizer BpeTokenizer::from_files(const std::string& vocab_json_path, const std::string& merges_txt_path) {
    auto vocab = vocab_entries(parse_json_file(vocab_json_path), vocab_json_path);

    const std::string text = read_text_file(merges_txt_path);
    validate_utf8(text, merges_txt_path);
    std::vector<BpeMerge> merges;
    std::vector<std::size_t> lines;   // 1-based line of each merge
    std::size_t line_number = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t stop = text.find('\n', at);
        if (stop == std::string::npos) stop = text.size();
        std::string_view line(text.data() + at, stop - at);
        at = stop + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line_number == 1 && line.starts_with("#version")) continue;
        if (line.empty() && at >= text.size()) break;   // the newline that ends the file
        auto merge = split_merge(line);
        if (!merge) {
            throw Error(merges_txt_path + " line " + std::to_string(line_number) + ": expected two tokens separated " +
                        "by one space, got " + quote_token(line));
        }
        if (merges.size() >= max_entries) {
            throw Error(merges_txt_path + ": more than " + std::to_string(max_entries) + " merges");
        }
        merges.push_back(std::move(*merge));
        lines.push_back(line_number);
    }

    BpeOptions options;
    for (const auto& [token, id] : vocab) {
        if (token == "<|endoftext|>") options.special_tokens.push_back(token);
    }
    return BpeTokenizer(vocab, merges, std::move(options), vocab_json_path,
                        [&](std::size_t i) { return merges_txt_path + " line " + std::to_string(lines[i]); });
}

namespace {

// tokenizer.json's model must be GPT-2's byte-level BPE: no subword prefix or suffix, no
// byte fallback.
void check_byte_level_model(const json& model, const std::string& path) {
    if (const json* type = member(model, "type"); type && *type != "BPE") {
        throw Error(path + ": model.type is " + type->dump() + "; only \"BPE\" is read here");
    }
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        const json* value = member(model, key);
        if (value && !(value->is_string() && value->get_ref<const std::string&>().empty())) {
            throw Error(path + ": model." + key + " is " + value->dump() + "; GPT-2's byte-level BPE has none");
        }
    }
    if (const json* fallback = member(model, "byte_fallback"); fallback && *fallback != false) {
        throw Error(path + ": model.byte_fallback is " + fallback->dump() + "; only byte-level BPE is read here");
    }
}

// No normalizer, and GPT-2's ByteLevel pre-tokenizer; returns its add_prefix_space.
BpeOptions read_byte_level_pre_tokenizer(const json& root, const std::string& path) {
    if (const json* normalizer = member(root, "normalizer")) {
        throw Error(path + ": normalizer is " + normalizer->dump().substr(0, 80) +
                    "; GPT-2's byte-level BPE has none (null)");
    }
    BpeOptions options;
    const json* pre = member(root, "pre_tokenizer");
    if (!pre || !pre->is_object() || pre->value("type", json()) != "ByteLevel") {
        throw Error(path + ": pre_tokenizer is " + (pre ? pre->dump().substr(0, 80) : std::string("null")) +
                    "; expected {\"type\": \"ByteLevel\", ...} (GPT-2's byte-level BPE)");
    }
    if (const json* regex = member(*pre, "use_regex"); regex && *regex != true) {
        throw Error(path + ": pre_tokenizer.use_regex is " + regex->dump() + "; only GPT-2's regex is read here");
    }
    if (const json* prefix = member(*pre, "add_prefix_space")) {
        if (!prefix->is_boolean()) throw Error(path + ": pre_tokenizer.add_prefix_space must be true or false");
        options.add_prefix_space = prefix->get<bool>();
    }
    return options;
}

// model.merges: "a b" strings or ["a", "b"] pairs.
std::vector<BpeMerge> read_json_merges(const json& model, const std::string& path) {
    const json* merges_json = member(model, "merges");
    if (!merges_json || !merges_json->is_array()) throw Error(path + ": model.merges: missing, or not an array");
    std::vector<BpeMerge> merges;
    merges.reserve(merges_json->size());
    for (std::size_t i = 0; i < merges_json->size(); ++i) {
        const json& m = (*merges_json)[i];
        const std::string where = path + ": model.merges[" + std::to_string(i) + "]";
        std::optional<BpeMerge> merge;
        if (m.is_string()) {
            merge = split_merge(m.get_ref<const std::string&>());
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string() &&
                   !m[0].get_ref<const std::string&>().empty() && !m[1].get_ref<const std::string&>().empty()) {
            merge = BpeMerge{m[0].get<std::string>(), m[1].get<std::string>()};
        }
        if (!merge) {
            throw Error(where + ": expected \"a b\" or [\"a\", \"b\"], got " + m.dump().substr(0, 80));
        }
        merges.push_back(std::move(*merge));
    }
    return merges;
}

// Added tokens (<|endoftext|>) are kept whole in the text; one missing from model.vocab joins it.
void add_added_tokens(const json& added, const std::string& path,
                      std::vector<std::pair<std::string, std::int32_t>>& vocab, BpeOptions& options) {
    std::unordered_map<std::string, std::int32_t> vocab_ids;
    for (const auto& [token, id] : vocab) vocab_ids.emplace(token, id);
    if (!added.is_array()) throw Error(path + ": added_tokens must be an array");
    for (std::size_t i = 0; i < added.size(); ++i) {
        const json& a = added[i];
        const std::string where = path + ": added_tokens[" + std::to_string(i) + "]";
        const json* id = a.is_object() ? member(a, "id") : nullptr;
        const json* content = a.is_object() ? member(a, "content") : nullptr;
        if (!id || !id->is_number_integer() || !content || !content->is_string() ||
            content->get_ref<const std::string&>().empty()) {
            throw Error(where + ": expected {\"id\": integer, \"content\": non-empty string, ...}");
        }
        const std::string& text = content->get_ref<const std::string&>();
        const auto same_token = vocab_ids.find(text);
        if (same_token == vocab_ids.end()) {
            const std::int64_t value = id->get<std::int64_t>();
            if (value < 0 || value >= static_cast<std::int64_t>(BpeTokenizer::max_entries)) {
                throw Error(where + ": id " + std::to_string(value) + " is outside [0, " +
                            std::to_string(BpeTokenizer::max_entries) + ")");
            }
            vocab.emplace_back(text, static_cast<std::int32_t>(value));
            vocab_ids.emplace(text, static_cast<std::int32_t>(value));
        } else if (same_token->second != id->get<std::int64_t>()) {
            throw Error(where + ": " + quote_token(text) + " has id " + id->dump() + " here but " +
                        std::to_string(same_token->second) + " in model.vocab");
        }
        options.special_tokens.push_back(text);
    }
}

}   // namespace

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::string& path) {
    const json root = parse_json_file(path);
    if (!root.is_object()) throw Error(path + ": expected a JSON object at the top level");
    const json* model = member(root, "model");
    if (!model || !model->is_object()) throw Error(path + ": model: missing, or not an object");
    check_byte_level_model(*model, path);
    BpeOptions options = read_byte_level_pre_tokenizer(root, path);

    const json* vocab_json = member(*model, "vocab");
    if (!vocab_json) throw Error(path + ": model.vocab is missing");
    auto vocab = vocab_entries(*vocab_json, path + ": model.vocab");
    const std::vector<BpeMerge> merges = read_json_merges(*model, path);
    if (const json* added = member(root, "added_tokens")) add_added_tokens(*added, path, vocab, options);
    return BpeTokenizer(vocab, merges, std::move(options), path + ": model.vocab",
                        [&](std::size_t i) { return path + ": model.merges[" + std::to_string(i) + "]"; });
}

bool BpeTokenizer::has_id(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < entries_.size() && entries_[static_cast<std::size_t>(id)].present;
}

const std::string& BpeTokenizer::token(std::int32_t id) const {
    if (!has_id(id)) throw Error("token id " + std::to_string(id) + " is not in the vocabulary");
    return entries_[static_cast<std::size_t>(id)].token;
}

std::string BpeTokenizer::label(std::int32_t id) const {
    if (!has_id(id)) throw Error("token id " + std::to_string(id) + " is not in the vocabulary");
    return bpe_label(entries_[static_cast<std::size_t>(id)].bytes);
}

std::optional<std::int32_t> BpeTokenizer::find(std::string_view token) const {
    const auto it = ids_.find(std::string(token));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

// One pre-token [begin, end) of `text`: its bytes become one-byte tokens, then the
// lowest-ranked adjacent pair is merged, again and again (leftmost first among equal
// ranks), as GPT-2's bpe(). A heap of candidate pairs over a linked list of symbols keeps
// it O(n log n); a candidate whose symbols changed since it was pushed is skipped.
void BpeTokenizer::encode_piece(std::string_view text, std::size_t begin, std::size_t end, std::size_t offset,
                                bool prefixed, std::vector<BpeToken>& out) const {
    struct Symbol {
        std::int32_t id;
        std::size_t begin, end;   // bytes in `text`
        std::ptrdiff_t prev, next;
        bool alive;
    };
    struct Candidate {
        std::uint32_t rank;
        std::size_t left;   // index of the left symbol
        std::int32_t left_id, right_id;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    // Byte x of `text` is byte offset + x of the input, less the space added in front, if any.
    const auto to_input = [&](std::size_t x) { return prefixed ? offset + (x > 0 ? x - 1 : 0) : offset + x; };
    if (begin >= end) return;
    std::vector<Symbol> symbols;
    symbols.reserve(end - begin);
    for (std::size_t at = begin; at < end; ++at) {
        const auto byte = static_cast<unsigned char>(text[at]);
        const std::int32_t id = byte_ids_[byte];
        if (id < 0) {
            throw Error("byte " + hex_escape(byte, 2, "0x") + " at " + std::to_string(to_input(at)) +
                        " has no token (" + quote_token(utf8_encode(byte_chars[byte])) + ") in the vocabulary");
        }
        const auto i = static_cast<std::ptrdiff_t>(symbols.size());
        symbols.push_back({id, at, at + 1, i - 1, i + 1, true});
    }
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    const auto push = [&](std::ptrdiff_t left) {
        if (left < 0) return;
        const Symbol& l = symbols[static_cast<std::size_t>(left)];
        if (l.next < 0) return;
        const Symbol& r = symbols[static_cast<std::size_t>(l.next)];
        const std::uint64_t key =
            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l.id)) << 32) | static_cast<std::uint32_t>(r.id);
        const auto it = merges_.find(key);
        if (it != merges_.end()) heap.push({it->second.rank, static_cast<std::size_t>(left), l.id, r.id});
    };
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) push(static_cast<std::ptrdiff_t>(i));

    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol& l = symbols[c.left];
        if (!l.alive || l.id != c.left_id || l.next < 0) continue;
        Symbol& r = symbols[static_cast<std::size_t>(l.next)];
        if (r.id != c.right_id) continue;
        const std::uint64_t key =
            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l.id)) << 32) | static_cast<std::uint32_t>(r.id);
        l.id = merges_.at(key).id;
        l.end = r.end;
        l.next = r.next;
        r.alive = false;
        if (l.next >= 0) symbols[static_cast<std::size_t>(l.next)].prev = static_cast<std::ptrdiff_t>(c.left);
        push(l.prev);
        push(static_cast<std::ptrdiff_t>(c.left));
    }

    for (std::ptrdiff_t i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
        const Symbol& s = symbols[static_cast<std::size_t>(i)];
        const std::string& bytes = entries_[static_cast<std::size_t>(s.id)].bytes;
        out.push_back({s.id, to_input(s.begin), to_input(s.end), bpe_label(bytes)});
    }
}

// Text between special tokens; `offset` is where it starts in the input.
void BpeTokenizer::encode_chunk(std::string_view chunk, std::size_t offset, std::vector<BpeToken>& out) const {
    if (chunk.empty()) return;
    std::string with_space;
    const bool prefixed = options_.add_prefix_space && chunk.front() != ' ';
    if (prefixed) {
        with_space.reserve(chunk.size() + 1);
        with_space += ' ';
        with_space += chunk;
        chunk = with_space;
    }
    for (const auto& [begin, end] : gpt2_pretokenize(chunk)) encode_piece(chunk, begin, end, offset, prefixed, out);
}

std::vector<BpeToken> BpeTokenizer::encode(std::string_view text, const std::string& label) const {
    validate_utf8(text, label);
    std::vector<BpeToken> tokens;
    split_on_specials(
        text, specials_,
        [&](std::size_t begin, std::size_t end) { encode_chunk(text.substr(begin, end - begin), begin, tokens); },
        [&](const SpecialToken& special, std::size_t at) {
            tokens.push_back({special.second, at, at + special.first.size(), bpe_label(special.first)});
        });
    return tokens;
}

std::vector<std::int32_t> BpeTokenizer::encode_ids(std::string_view text, const std::string& label) const {
    std::vector<std::int32_t> ids;
    for (const auto& t : encode(text, label)) ids.push_back(t.id);
    return ids;
}

std::string BpeTokenizer::decode(std::span<const std::int32_t> ids) const {
    std::string bytes;
    for (const std::int32_t id : ids) {
        if (!has_id(id)) throw Error("cannot decode: token id " + std::to_string(id) + " is not in the vocabulary");
        bytes += entries_[static_cast<std::size_t>(id)].bytes;
    }
    return bytes;
}

}   // namespace headscope
