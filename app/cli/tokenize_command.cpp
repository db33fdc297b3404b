// `headscope-cli tokenize`: a folder's tokenizer on one text, as Hugging Face's
// tokenizer(text)["input_ids"] gives it (CLI.md). One JSON object on stdout:
// {"ids": [...], "tokens": [...]}, tokens being the vocabulary's form of each id.

#include "app/cli/command.h"
#include "core/base/error.h"
#include "core/text/text.h"
#include "core/text/tokenizer/siglip_tokenizer.h"
#include "core/text/tokenizer/tokenizer_folder.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace headscope::cli {

namespace {

struct TokenizeArgs {
    std::string folder;
    std::string text;
    std::string text_file;
    bool no_special = false;
    CLI::Option* text_option = nullptr;
    CLI::Option* text_file_option = nullptr;
};

// The folder's tokenizer; refused when the folder is missing or has no tokenizer files.
tokenizer::FolderTokenizer open_tokenizer(const std::string& folder) {
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec)) {
        throw Error("--model " + folder + ": not a folder (expected a Hugging Face folder with tokenizer.json)");
    }
    auto found = tokenizer::read_folder_tokenizer(folder);
    if (!found) {
        throw Error(
            "--model " + folder +
            ": no tokenizer files (expected tokenizer.json, vocab.json + merges.txt, vocab.txt, or spiece.model "
            "with a tokenizer_config.json naming SiglipTokenizer)");
    }
    return std::move(*found);
}

}   // namespace

Command add_tokenize_command(CLI::App& app) {
    auto args = std::make_shared<TokenizeArgs>();
    CLI::App* cmd = app.add_subcommand(
        "tokenize", "Tokenize a text with a Hugging Face folder's tokenizer: the ids and tokens, as JSON");
    cmd->add_option("--model", args->folder,
                    "A folder with tokenizer.json (and tokenizer_config.json), "
                    "vocab.json + merges.txt, vocab.txt, or SigLIP's spiece.model + tokenizer_config.json; "
                    "no weights needed")
        ->required();
    args->text_option = cmd->add_option("--text", args->text, "The text (may be empty)");
    args->text_file_option =
        cmd->add_option("--text-file", args->text_file, "A UTF-8 file holding the text (one final line end dropped)");
    args->text_option->excludes(args->text_file_option);
    cmd->add_flag("--no-special", args->no_special,
                  "No special tokens added around the text (Hugging Face's add_special_tokens=False); special "
                  "tokens typed in the text are still read as such");
    return {cmd, [args](Warnings&) {
                if (args->text_option->count() == 0 && args->text_file_option->count() == 0) {
                    throw Error("give --text TEXT or --text-file FILE");
                }
                const std::string text =
                    args->text_file_option->count() > 0 ? read_sentence_file(args->text_file) : args->text;
                std::vector<std::int32_t> ids;
                std::optional<tokenizer::SiglipTokenizer> siglip;
                std::optional<tokenizer::FolderTokenizer> found;
                if (tokenizer::is_siglip_tokenizer_folder(args->folder)) {
                    const std::filesystem::path dir(args->folder);
                    siglip.emplace((dir / "spiece.model").string(), (dir / "tokenizer_config.json").string());
                    for (const auto& token : siglip->encode(text, "--text", !args->no_special, false)) {
                        ids.push_back(token.id);
                    }
                } else {
                    found = open_tokenizer(args->folder);
                    ids = found->tokenizer.encode_ids(text, !args->no_special, "--text");
                }
                const tokenizer::Tokenizer& t = siglip ? siglip->pieces() : found->tokenizer;
                nlohmann::ordered_json out;
                out["ids"] = ids;
                out["tokens"] = nlohmann::json::array();
                for (const std::int32_t id : ids) out["tokens"].push_back(*t.token(id));
                std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
                return 0;
            }};
}

}   // namespace headscope::cli
