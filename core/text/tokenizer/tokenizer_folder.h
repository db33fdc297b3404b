#pragma once
// The tokenizer a Hugging Face folder ships, as transformers' AutoTokenizer loads it:
//   tokenizer.json (with tokenizer_config.json where present), the modern form;
//   vocab.json + merges.txt, GPT-2's older byte-level BPE files;
//   vocab.txt (with tokenizer_config.json), BERT's WordPiece vocabulary.

#include "core/base/json_file.h"
#include "core/text/tokenizer/tokenizer.h"

#include <optional>
#include <string>

namespace headscope::tokenizer {

struct FolderTokenizer {
    Tokenizer tokenizer;
    std::string files;   // what it was read from, for `info`: "tokenizer.json + tokenizer_config.json"
};

// The folder's tokenizer, or nullopt when it has none of those files.
std::optional<FolderTokenizer> read_folder_tokenizer(const std::string& folder);

// One tokenizer.json, with the tokenizer_config.json beside it (path may be empty).
Tokenizer read_tokenizer_json(const std::string& tokenizer_json, const std::string& tokenizer_config);
// The largest tokenizer file read (Gemma 3's tokenizer.json is about 33 MB).
inline constexpr std::uintmax_t max_tokenizer_file_bytes = 256u << 20;
// The limits every tokenizer file is parsed under.
JsonLimits tokenizer_limits();

}   // namespace headscope::tokenizer
