#pragma once
// One encoder-decoder model for every family of them (T5, BART), built from a family
// description as the one decoder (decoder.h) and the one encoder (encoder.h) are:
//   - `Seq2SeqConfig`: what the family's config.json says, in one vocabulary (widths, heads,
//     both stacks' layers, norms and their placement, positions: T5's relative buckets or
//     BART's learned table, the head); each family's reader (families/t5, families/bart)
//     fills it and refuses what it cannot compute;
//   - `Seq2SeqTensorNames`: where each tensor lives, per stack; the one bind_tensors
//     (seq2seq.cpp) walks them for loading, export and the parameter count.
//
//   source: m = x = embed[source ids] * scale (+ positions) (-> embedding norm)      [Ts, E]
//           per encoder layer: the block (bidirectional self-attention; T5: bucketed bias)
//           m = final_norm(x)                        (T5; BART's post-norm blocks end normed)
//   target: x = embed[decoder ids] * scale (+ positions) (-> embedding norm)        [Tt, E]
//           per decoder layer: the block (causal self-attention, cross-attention to m)
//           logits = final_norm(x) * head_scale  head^T  (+ logits bias)             [Tt, V]

#include "core/base/load_control.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"
#include "core/models/hf/text_tokens.h"
#include "core/models/model.h"
#include "core/nn/run_blocks.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace headscope {

struct Seq2SeqConfig {
    std::string model_type;
    std::string architecture;   // architectures[0], or the family's default
    Eigen::Index vocab_size = 0;
    Eigen::Index width = 0;        // E (d_model)
    Eigen::Index n_heads = 0;      // H, in every attention of both stacks
    Eigen::Index head_width = 0;   // Dh (T5's d_kv; else E / H)
    Eigen::Index mlp_width = 0;    // I
    Eigen::Index encoder_layers = 0;
    Eigen::Index decoder_layers = 0;
    Eigen::Index max_tokens = 0;   // the longest source or target (learned positions); 0: none
    std::string width_field = "d_model";
    std::string mlp_field;      // the config.json field behind I
    std::string layers_field;   // ... behind the encoder's layers ("num_layers")
    std::string heads_field;    // ... behind H
    std::string max_tokens_field;

    NormKind norm_kind = NormKind::layer_norm;
    float norm_eps = 1e-5f;
    NormPlacement norm_placement = NormPlacement::pre;
    bool final_norms = false;      // a norm after each stack (T5's final_layer_norm)
    bool embedding_norm = false;   // a norm of the embeddings, positions added (BART's layernorm_embedding)
    bool biases = false;           // on every linear and norm

    float score_scale = 0.0f;   // 0: 1 / sqrt(Dh); T5: 1 (no scaling)
    // T5: the relative position buckets (the tables in each stack's first layer, shared by the others).
    Eigen::Index position_buckets = 0;   // 0: none
    Eigen::Index position_max_distance = 128;
    // BART: learned positions, the table's rows (the positions plus `position_offset`).
    Eigen::Index learned_positions = 0;   // 0: none
    Eigen::Index position_offset = 0;

    Activation activation = Activation::relu;
    bool gated_mlp = false;   // down(act(wi_0 x) * wi_1 x) (T5 v1.1, Flan-T5)

    float embedding_scale = 1.0f;   // BART's scale_embedding: sqrt(E)
    bool tied_head = true;          // logits from the shared embedding
    float head_scale = 1.0f;        // T5 with a tied head: E^-0.5 on the hidden state
    bool logits_bias = false;       // BART's final_logits_bias [1, V]

    std::int64_t decoder_start_id = 0;
    std::int64_t end_id = -1;
    std::int64_t pad_id = -1;

    // The family's settings as `info` prints them, beyond what every model shows.
    std::vector<std::pair<std::string, std::string>> settings;
};

// An attention's four linears, by name after the layer's prefix.
struct AttentionNames {
    std::string q, k, v, out;
};

// One stack's tensors, per layer after `<stack><layers><l>.`.
struct Seq2SeqStackNames {
    std::string stack;                         // "encoder.", "model.decoder."
    std::string layers;                        // "block.", "layers."
    std::string positions = {};                // a learned position table; empty: none
    std::string embedding_norm = {};           // empty: none
    std::string self_norm;                     // the norm around self-attention
    AttentionNames self;                       //
    std::string relative_bias = {};            // the first layer's bias table (T5); empty: none
    std::string cross_norm = {};               // decoders: the norm around cross-attention
    AttentionNames cross = {};                 // decoders: the cross-attention
    std::string mlp_norm;                      //
    std::string gate = {}, up, down;           // the MLP (gate: gated MLPs)
    std::string final_norm = {};               // empty: none
    std::vector<std::string> ignorable = {};   // stored by some releases, ignored (after `stack`)
};

struct Seq2SeqTensorNames {
    std::string prefix = {};   // dropped from stored names when present ("model.")
    std::string shared;        // the embedding both stacks (and a tied head) read
    // Copies of the shared embedding some releases store as well (tied in transformers): read
    // when present and checked equal.
    std::string encoder_embed, decoder_embed;
    Seq2SeqStackNames encoder, decoder;
    std::string head = "lm_head";
    std::string logits_bias = {};   // [1, V] added to the logits where stored; empty: none
};

struct Seq2SeqFamily {
    std::string model_type;                   // "t5"
    std::vector<std::string> architectures;   // the first is the default
    // A family's names depend on its config (T5's gated MLP): the reader's config in, names out.
    Seq2SeqTensorNames (*names)(const Seq2SeqConfig& c);
    Seq2SeqConfig (*read_config)(const HfFields& f);
};

struct Seq2SeqWeights {
    WeightMatrix shared;                                 // [V, E]
    WeightMatrix encoder_embed, decoder_embed;           // stored copies of `shared`, or empty
    WeightMatrix encoder_positions, decoder_positions;   // [rows, E], or empty
    Norm encoder_embedding_norm, decoder_embedding_norm;
    Stack encoder, decoder;
    Norm encoder_final_norm, decoder_final_norm;
    WeightMatrix head;    // [V, E], or empty: tied to shared
    Matrix logits_bias;   // [1, V], or empty
};

class HfSeq2SeqModel final : public Model {
public:
    HfSeq2SeqModel(const Seq2SeqFamily& family, const std::string& folder, const LoadControl& control);

    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override;
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override;
    ModelInput encode_text_after(std::string_view text, const ModelInput&) const override { return encode_text(text); }
    ModelInput encode_ids_after(std::span<const std::int64_t> ids, const ModelInput&) const override {
        return encode_ids(ids);
    }
    ModelInput encode_target_ids(const ModelInput& input, std::span<const std::int64_t> ids) const override;
    ModelInput encode_target_text(const ModelInput& input, std::string_view text) const override;
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return stack_head_map(weights_.decoder, trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override;
    Matrix logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const override;
    std::vector<OwnedTensor> export_weights() const override;
    std::string output_label(Eigen::Index index) const override;

    const Seq2SeqConfig& config() const { return config_; }

private:
    void describe(const std::string& folder, const HfTensorTable& table, const HfWeights& stored);
    // The folder's tokenizer into tokens_; what keeps it from reading text, or "".
    std::string read_tokenizer(const std::string& folder);
    // `ids` embedded as `stack`'s input (its table of positions, its embedding norm).
    ModelInput embed(std::vector<std::int64_t> ids, bool decoder) const;
    // The logits [T, V] of the decoder's final hidden rows (head_scale applied already).
    Matrix lm_logits(const ConstMatrixRef& hidden) const;
    // The source ids with the decoder's start token alone as the target.
    ModelInput source_input(ModelInput source) const;

    Seq2SeqConfig config_;
    Seq2SeqTensorNames names_;
    Seq2SeqWeights weights_;
    HfMappedFiles mapped_;
    std::unique_ptr<HfTextTokens> tokens_;
    std::string tokenizer_note_;   // why a folder's tokenizer files are not read ("": read, or none)
    ModelInfo info_;
};

// Opens a checkpoint folder of `family`.
std::unique_ptr<Model> load_hf_seq2seq(const Seq2SeqFamily& family, const std::string& folder,
                                       const LoadControl& control = {});

}   // namespace headscope
