#pragma once
// The per-model files older Hugging Face folders ship instead of tokenizer.json, read into
// the same pipeline transformers' converters build from them:
//   GPT-2's vocab.json + merges.txt: byte-level BPE, "<|endoftext|>" special when present;
//   BERT's vocab.txt (+ tokenizer_config.json): BertNormalizer, BertPreTokenizer,
//   WordPiece, [CLS] ... [SEP], as BertTokenizerFast (what AutoTokenizer loads).

#include "core/text/tokenizer/tokenizer.h"

#include <string>

namespace headscope::tokenizer {

Tokenizer read_gpt2_tokenizer_files(const std::string& vocab_json, const std::string& merges_txt);
// `tokenizer_config` may be empty (no file): lower-cased, accents stripped, CJK spaced.
Tokenizer read_bert_vocab(const std::string& vocab_txt, const std::string& tokenizer_config);
Tokenizer read_bert_vocab(const std::string& vocab_txt, const BertNormalizerOptions& options);
// The BertTokenizer options of a vocab.txt folder's tokenizer_config.json ("" for none).
BertNormalizerOptions read_bert_config(const std::string& tokenizer_config);

}   // namespace headscope::tokenizer
