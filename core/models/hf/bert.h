#pragma once
// Hugging Face BERT checkpoints as a headscope Model, in plain C++: BertModel,
// BertForMaskedLM, BertForPreTraining and BertForSequenceClassification, as
// transformers' modeling_bert.py computes them (post-LN, not causal):
//
//   x = LayerNorm(word_embeddings[ids] + position_embeddings[0 .. T-1]
//                 + token_type_embeddings[type_ids])                                [T, E]
//   per layer encoder.layer.{l}:
//     x = attention.output.LayerNorm(x + attention.output.dense(SelfAttention(x)))
//     x = output.LayerNorm(x + output.dense(hidden_act(intermediate.dense(x))))
//   hidden = x (BERT has no final norm)
//   masked LM head: logits = LayerNorm(act(transform.dense(hidden))) word_embeddings^T
//                            + cls.predictions.bias                                  [T, V]
//   classifier:     logits = classifier(tanh(pooler.dense(hidden[0])))           [1, labels]
//
// The embedding Norm is applied in encode_*: ModelInput::embeddings is what the
// first layer consumes, and the token types (segment A / B of a sentence pair) exist
// only there. BertForPreTraining's next-sentence head (cls.seq_relationship) is loaded,
// checked and exported, but not run: dump's logits are the masked-LM head's.
//
// Weights load as stored (F32, F16, BF16 or F64) with or without the "bert." prefix and
// with Norm gamma / beta names; the int64 buffers embeddings.position_ids and
// embeddings.token_type_ids are ignored. Text is encoded by the folder's tokenizer
// (tokenizer.json, or vocab.txt with tokenizer_config.json's options, as BertTokenizerFast):
// "[CLS] text [SEP]", or, when the text contains "[SEP]", the sentence pair
// "[CLS] A [SEP] B [SEP]" split at the first one.

#include "core/base/load_control.h"
#include "core/models/hf/tensors.h"
#include "core/models/model.h"
#include "core/nn/layers.h"
#include "core/nn/run_blocks.h"
#include "core/text/tokenizer/tokenizer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope {

// BertConfig (model_type "bert"): transformers' field names and defaults
// (bert-base-uncased). Settings this build does not compute are refused, naming the
// field: position_embedding_type other than "absolute", is_decoder, add_cross_attention.
struct HfBertConfig {
    std::string architecture;                // architectures[0], or "" when absent
    Eigen::Index vocab_size = 30522;         // V
    Eigen::Index hidden_size = 768;          // E
    Eigen::Index num_hidden_layers = 12;     // L
    Eigen::Index num_attention_heads = 12;   // H; E % H == 0
    Eigen::Index intermediate_size = 3072;   // MLP width
    std::string hidden_act = "gelu";         // "gelu" is the exact erf form
    Activation activation = Activation::gelu;
    Eigen::Index max_position_embeddings = 512;   // the longest sequence
    Eigen::Index type_vocab_size = 2;             // token types (segments A and B)
    float layer_norm_eps = 1e-12f;
    std::vector<std::string> id2label;   // [num_labels]; "LABEL_i" where the file names none
};

// Reads and validates a BERT config.json.
HfBertConfig read_hf_bert_config(const std::string& config_path);

// One encoder layer; each member names its tensors under "encoder.layer.{l}.".

// Which head the checkpoint carries.
enum class HfBertHead {
    none,         // BertModel: no logits
    masked_lm,    // BertForMaskedLM, BertForPreTraining: cls.predictions -> [T, V]
    classifier,   // BertForSequenceClassification: pooler + classifier -> [1, labels]
};

// Names are transformers' own, without the "bert." prefix.
struct HfBertWeights {
    WeightMatrix word_embeddings;   // embeddings.word_embeddings.weight       [V, E]
    Matrix position_embeddings;     // embeddings.position_embeddings.weight   [max_position_embeddings, E]
    Matrix token_type_embeddings;   // embeddings.token_type_embeddings.weight [type_vocab_size, E]
    Norm embeddings_norm;           // embeddings.LayerNorm.weight / .bias     [E]
    Stack stack;                    // encoder.layer.{l}.*, post-LN            [L]
    Linear pooler;                  // pooler.dense [E, E] / [E]; empty when not stored
    HfBertHead head = HfBertHead::none;
    Linear transform;          // cls.predictions.transform.dense [E, E] / [E]
    Norm transform_norm;       // cls.predictions.transform.LayerNorm     [E]
    WeightMatrix decoder;      // cls.predictions.decoder.weight [V, E] when stored apart;
                               // empty = word_embeddings (tied)
    Vector decoder_bias;       // cls.predictions.bias (= cls.predictions.decoder.bias) [V]
    Linear seq_relationship;   // cls.seq_relationship [2, E] / [2] (next sentence; not run)
    Linear classifier;         // classifier [labels, E] / [labels]
};

class HfBertModel final : public Model {
public:
    // Reads `folder`: config.json, the weights, and vocab.txt (+ tokenizer_config.json) when present.
    HfBertModel(const std::string& folder, const LoadControl& control);

    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override;
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override;
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    // Every weight as float, under transformers' names without the "bert." prefix.
    std::vector<OwnedTensor> export_weights() const override;
    // The vocabulary's piece for masked-LM logits, id2label's name for a classifier.
    std::string output_label(Eigen::Index index) const override;

    const HfBertConfig& config() const { return config_; }

private:
    // The folder's tokenizer (tokenizer.json, or vocab.txt + tokenizer_config.json), when it
    // has one; sets text_refusal_ when --text cannot be encoded. Returns the files, for `info`.
    std::string read_tokenizer(const std::string& folder);
    // info_, once the weights, the head and the tokenizer are read.
    void describe(const std::string& folder, const std::string& architecture, const std::string& head,
                  const std::string& tokenizer_files, const HfTensorTable& table, const HfWeights& stored);
    // word + position + token type embeddings, then the embedding LayerNorm.
    ModelInput embed(std::vector<std::int64_t> ids, const std::vector<std::int32_t>& type_ids) const;

    HfBertConfig config_;
    HfBertWeights weights_;
    HfMappedFiles mapped_;                            // the files F32 weights are read from in place
    std::optional<tokenizer::Tokenizer> tokenizer_;   // labels even when text_refusal_ is set
    std::int32_t cls_id_ = 0, sep_id_ = 0;
    std::string text_refusal_;            // why --text cannot be encoded; empty when it can
    std::vector<std::string> id2label_;   // classifier only
    ModelInfo info_;
};

// Opens a BERT checkpoint folder (model_type "bert").
std::unique_ptr<Model> load_hf_bert(const std::string& folder, const LoadControl& control = {});

}   // namespace headscope
