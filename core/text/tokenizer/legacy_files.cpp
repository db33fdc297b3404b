#include "core/text/tokenizer/legacy_files.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/base/json_file.h"
#include "core/base/shown.h"
#include "core/text/text.h"
#include "core/text/tokenizer/bpe_model.h"
#include "core/text/tokenizer/tokenizer_folder.h"
#include "core/text/tokenizer/wordpiece_model.h"

#include <algorithm>

namespace headscope::tokenizer {

namespace {

// A line of a file as messages show it: quoted, cut, control characters escaped.
std::string shown_line(std::string_view line) {
    std::string text(1, '"');
    text += shown(line);
    text += '"';
    return text;
}

// Each line of a text file, CRLF or LF, the newline that ends the file not a line of its own.
template <typename OnLine>
void for_each_line(const std::string& text, OnLine&& on_line) {
    std::size_t number = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t stop = text.find('\n', at);
        if (stop == std::string::npos) stop = text.size();
        std::string_view line(text.data() + at, stop - at);
        at = stop + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        on_line(line, ++number);
    }
}

}   // namespace

BertNormalizerOptions read_bert_config(const std::string& path) {
    BertNormalizerOptions options;
    if (path.empty()) return options;
    const nlohmann::json root = read_json_file(path, "a tokenizer config", tokenizer_limits());
    const JsonField config(root, "", path);
    if (!root.is_object()) config.expected("a JSON object");
    const std::string tokenizer_class = config.string_or("tokenizer_class", "BertTokenizer");
    if (tokenizer_class != "BertTokenizer" && tokenizer_class != "BertTokenizerFast") {
        config.at("tokenizer_class")
            .fail("\"" + tokenizer_class +
                  "\" is not supported with vocab.txt (supported: "
                  "BertTokenizer, BertTokenizerFast)");
    }
    if (!config.bool_or("do_basic_tokenize", true)) {
        config.at("do_basic_tokenize")
            .fail("false is not supported (text is always split on spaces and punctuation first)");
    }
    options.lowercase = config.bool_or("do_lower_case", true);
    if (const auto strip = config.find("strip_accents")) options.strip_accents = strip->boolean();
    options.handle_chinese_chars = config.bool_or("tokenize_chinese_chars", true);
    return options;
}

Tokenizer read_gpt2_tokenizer_files(const std::string& vocab_json, const std::string& merges_txt) {
    const nlohmann::json vocab_root = read_json_file(vocab_json, "a tokenizer file", tokenizer_limits());
    Vocabulary vocab = Vocabulary::read(JsonField(vocab_root, "", vocab_json));

    const std::string text = read_file_bytes(merges_txt, max_tokenizer_file_bytes, "a tokenizer file");
    validate_utf8(text, merges_txt);
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::size_t> lines;   // 1-based line of each merge
    const std::size_t last_line = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    for_each_line(text, [&](std::string_view line, std::size_t number) {
        if (number == 1 && line.starts_with("#version")) return;
        if (line.empty() && number == last_line) return;
        const auto space = line.find(' ');
        if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string_view::npos) {
            throw Error(merges_txt + " line " + std::to_string(number) +
                        ": expected two tokens separated by one space, got " + shown_line(line));
        }
        if (merges.size() >= Vocabulary::max_entries) {
            throw Error(merges_txt + ": more than " + std::to_string(Vocabulary::max_entries) + " merges");
        }
        merges.emplace_back(line.substr(0, space), line.substr(space + 1));
        lines.push_back(number);
    });

    TokenizerParts parts;
    parts.pre_tokenizer = make_byte_level_pre_tokenizer(false);
    parts.decoder = make_byte_level_decoder();
    if (const auto eos = vocab.find("<|endoftext|>")) {
        parts.added_tokens.push_back(AddedToken{"<|endoftext|>", *eos, true, false, false, false, false});
    }
    parts.model = std::make_unique<BpeModel>(std::move(vocab), merges, BpeSettings{}, [&](std::size_t i) {
        return merges_txt + " line " + std::to_string(lines[i]);
    });
    return Tokenizer(std::move(parts), vocab_json);
}

Tokenizer read_bert_vocab(const std::string& vocab_txt, const std::string& tokenizer_config) {
    return read_bert_vocab(vocab_txt, read_bert_config(tokenizer_config));
}

Tokenizer read_bert_vocab(const std::string& vocab_txt, const BertNormalizerOptions& options) {
    const std::string text = read_file_bytes(vocab_txt, max_tokenizer_file_bytes, "a vocabulary");
    const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) +
                              (!text.empty() && text.back() != '\n' ? 1 : 0);
    if (lines > Vocabulary::max_entries) {
        throw Error(vocab_txt + ": " + std::to_string(lines) + " lines, more than the " +
                    std::to_string(Vocabulary::max_entries) + " tokens a vocabulary may have");
    }
    Vocabulary vocab;
    for_each_line(text, [&](std::string_view line, std::size_t number) {
        const auto id = static_cast<std::int32_t>(number - 1);   // the id is the line, from 0
        validate_utf8(line, vocab_txt + ": line " + std::to_string(number));
        if (line.empty()) return;   // a blank line keeps the ids after it in place, and matches nothing
        if (const auto earlier = vocab.find(line)) {
            throw Error(vocab_txt + ": " + shown_line(line) + " is listed twice (ids " + std::to_string(*earlier) +
                        " and " + std::to_string(id) + ")");
        }
        vocab.add(std::string(line), id);
    });
    if (vocab.size() == 0) throw Error(vocab_txt + ": the vocabulary is empty");
    const auto required = [&](const char* name, const char* why) {
        const auto id = vocab.find(name);
        if (!id) throw Error(vocab_txt + ": has no " + name + " token (" + why + ")");
        return *id;
    };
    required("[UNK]", "needed for words it cannot split");
    const std::int32_t cls = required("[CLS]", "needed to start a sequence");
    const std::int32_t sep = required("[SEP]", "needed to end a sequence");

    TokenizerParts parts;
    parts.normalizer = make_bert_normalizer(options);
    parts.pre_tokenizer = make_bert_pre_tokenizer();
    for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
        if (const auto id = vocab.find(special)) {
            parts.added_tokens.push_back(AddedToken{special, *id, true, false, false, false, false});
        }
    }
    parts.post_processor =
        make_template_processor({{false, {cls}, vocab_txt}, {true, {}, {}}, {false, {sep}, vocab_txt}});
    parts.decoder = make_wordpiece_decoder("##", true);
    parts.model = std::make_unique<WordPieceModel>(std::move(vocab), WordPieceSettings{});
    return Tokenizer(std::move(parts), vocab_txt);
}

}   // namespace headscope::tokenizer
