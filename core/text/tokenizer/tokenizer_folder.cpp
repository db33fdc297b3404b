#include "core/text/tokenizer/tokenizer_folder.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/base/json_file.h"
#include "core/text/text.h"
#include "core/text/tokenizer/legacy_files.h"

#include <filesystem>

namespace headscope::tokenizer {

namespace fs = std::filesystem;

namespace {

// A special token's text as tokenizer_config.json writes it: "<s>" or {"content": "<s>", ...}.
std::optional<std::string> special_token_text(const JsonField& config, std::string_view key) {
    const auto field = config.find(key);
    if (!field) return std::nullopt;
    if (field->value().is_string()) return field->string();
    if (field->value().is_object()) return field->at("content").string();
    field->expected("a string or {\"content\": ...}");
}

// transformers' LlamaTokenizerFast and GemmaTokenizerFast rebuild the post-processor on
// load from add_bos_token / add_eos_token (defaults: BOS yes, EOS no), whatever
// tokenizer.json says; Python users get those ids, so this does the same.
void apply_transformers_config(Tokenizer& tokenizer, const nlohmann::json& root, const std::string& file) {
    const JsonField config(root, "", file);
    if (!root.is_object()) config.expected("a JSON object");
    const std::string tokenizer_class = config.string_or("tokenizer_class", "");
    const bool rebuilds = tokenizer_class == "LlamaTokenizer" || tokenizer_class == "LlamaTokenizerFast" ||
                          tokenizer_class == "CodeLlamaTokenizer" || tokenizer_class == "CodeLlamaTokenizerFast" ||
                          tokenizer_class == "GemmaTokenizer" || tokenizer_class == "GemmaTokenizerFast";
    if (!rebuilds) return;
    std::vector<TemplatePart> parts;
    const auto special = [&](std::string_view key) -> TemplatePart {
        const auto text = special_token_text(config, key);
        if (!text) config.fail(std::string(key) + " is missing, and add_" + std::string(key) + " asks for it");
        const auto id = tokenizer.find(*text);
        if (!id) config.at(key).fail("\"" + *text + "\" is not in the tokenizer's vocabulary");
        return {false, {*id}, config.file() + ": " + std::string(key)};
    };
    if (config.bool_or("add_bos_token", true)) parts.push_back(special("bos_token"));
    parts.push_back({true, {}, {}});
    if (config.bool_or("add_eos_token", false)) parts.push_back(special("eos_token"));
    tokenizer.set_post_processor(make_template_processor(std::move(parts)));
}

}   // namespace

JsonLimits tokenizer_limits() {
    JsonLimits limits;
    limits.max_bytes = max_tokenizer_file_bytes;
    limits.max_depth = 32;
    limits.max_entries = Vocabulary::max_entries;
    return limits;
}

Tokenizer read_tokenizer_json(const std::string& tokenizer_json, const std::string& tokenizer_config) {
    ModelTables tables;
    const nlohmann::json root = read_json_file(tokenizer_json, "a tokenizer file", tokenizer_limits(),
                                               model_table_streams(tables, tokenizer_json));
    Tokenizer tokenizer = Tokenizer::read_json(root, tokenizer_json, std::move(tables));
    if (!tokenizer_config.empty()) {
        apply_transformers_config(tokenizer, read_json_file(tokenizer_config, "a tokenizer config", tokenizer_limits()),
                                  tokenizer_config);
    }
    return tokenizer;
}

std::optional<FolderTokenizer> read_folder_tokenizer(const std::string& folder) {
    const fs::path dir(folder);
    const auto exists = [&](const char* name) {
        std::error_code ec;
        return fs::exists(dir / name, ec);
    };
    if (exists("tokenizer.json")) {
        const bool has_config = exists("tokenizer_config.json");
        return FolderTokenizer{read_tokenizer_json((dir / "tokenizer.json").string(),
                                                   has_config ? (dir / "tokenizer_config.json").string() : ""),
                               has_config ? "tokenizer.json + tokenizer_config.json" : "tokenizer.json"};
    }
    if (exists("vocab.json") && exists("merges.txt")) {
        return FolderTokenizer{read_gpt2_tokenizer_files((dir / "vocab.json").string(), (dir / "merges.txt").string()),
                               "vocab.json + merges.txt"};
    }
    if (exists("vocab.txt")) {
        const bool has_config = exists("tokenizer_config.json");
        const BertNormalizerOptions options =
            read_bert_config(has_config ? (dir / "tokenizer_config.json").string() : "");
        return FolderTokenizer{read_bert_vocab((dir / "vocab.txt").string(), options),
                               std::string(has_config ? "vocab.txt + tokenizer_config.json" : "vocab.txt") +
                                   (options.lowercase ? " (WordPiece, lower-cased)" : " (WordPiece, cased)")};
    }
    return std::nullopt;
}

}   // namespace headscope::tokenizer
