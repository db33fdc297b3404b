#pragma once
// One decoder language model for every causal family, built from a family description,
// as llama.cpp's src/models/ files compose shared builders. A family is data:
//   - `DecoderConfig`: what its config.json says, in one vocabulary (heads, widths, norms,
//     rotary positions and windows per layer, caps, the head); each family's reader
//     (core/models/hf/<family>.cpp) fills it and refuses what it cannot compute;
//   - `DecoderTensorNames`: where each tensor lives in its checkpoint, written once; the
//     one bind_tensors (decoder.cpp) walks them for loading, export and the parameter count;
//   - `DecoderFamily`: the two, plus the model_type and known architectures: a registry row.
//
//   x = embed[ids] * embedding_scale (+ positions[0 .. T-1])                 [T, E]
//   per layer: the block (core/nn/block.h) with its window and rotary positions
//   hidden = final_norm(x);  logits = cap(hidden head^T)   (head: lm_head, or embed when tied)   [T, V]

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

// What differs between a family's layers: Gemma 2 and 3 alternate local (sliding-window)
// and global layers, each kind with its own rotary settings.
struct DecoderLayer {
    Eigen::Index window = 0;   // W keys up to the query's own; 0: global
    Rotary rotary;             // inactive: positions come from the embeddings (GPT-2)
};

struct DecoderConfig {
    std::string model_type;
    std::string architecture;                      // architectures[0], or the family's default
    Eigen::Index vocab_size = 0;                   // V
    Eigen::Index width = 0;                        // E (hidden_size)
    Eigen::Index n_layers = 0;                     // L
    Eigen::Index n_heads = 0;                      // H
    Eigen::Index n_kv_heads = 0;                   // Hkv (num_key_value_heads)
    Eigen::Index head_width = 0;                   // Dh (head_dim, else E / H)
    Eigen::Index mlp_width = 0;                    // I (intermediate_size)
    Eigen::Index max_tokens = 0;                   // the longest input taken
    Eigen::Index learned_positions = 0;            // rows of a learned position table (GPT-2); 0: none
    std::string max_tokens_field;                  // the config.json field behind max_tokens, for messages
    std::string width_field = "hidden_size";       // the config.json field behind E, for messages
    std::string mlp_field = "intermediate_size";   // the one behind I

    NormKind norm_kind = NormKind::rms_norm;
    float norm_eps = 1e-6f;
    bool norm_bias = false;   // LayerNorms with a bias

    bool qkv_bias = false;              // biases on q, k and v (Qwen 2, attention_bias)
    bool out_bias = false;              // on the output projection
    bool qk_norm = false;               // per-head RMSNorm of q and k before the rotation (Qwen 3, Gemma 3)
    float score_scale = 0.0f;           // 0: 1 / sqrt(Dh)
    float score_cap = 0.0f;             // soft cap of the scores; 0: none
    std::vector<DecoderLayer> layers;   // [L]

    Activation activation = Activation::silu;
    bool gated_mlp = true;   // down(act(gate x) * up x), else down(act(up x))
    bool mlp_bias = false;

    Residual residual = Residual::sequential;
    bool output_norms = false;   // norms of each sublayer's output (Gemma 2, 3)

    float embedding_scale = 1.0f;   // Gemma: sqrt(E)
    bool tied_head = true;          // logits from the embedding matrix
    float logit_cap = 0.0f;         // soft cap of the logits (Gemma 2); 0: none

    // The family's settings as `info` prints them, beyond what every decoder shows.
    std::vector<std::pair<std::string, std::string>> settings;
};

// How a checkpoint stores a layer's q, k and v.
enum class QkvLayout {
    separate,          // q_proj, k_proj, v_proj
    packed,            // one [D + 2 Dkv, E] tensor, q then k then v (Phi-3's qkv_proj)
    packed_per_head,   // one [3 D, E] tensor, each head's q, k, v rows together (GPT-NeoX's query_key_value)
    conv1d,            // GPT-2's c_attn: Conv1D [E, 3E], q then k then v
};

// How a checkpoint stores the MLP.
enum class MlpLayout {
    separate,   // gate_proj, up_proj, down_proj (plain MLPs: up and down)
    packed,     // gate_up_proj [2I, E], gate then up (Phi-3); down_proj
    conv1d,     // GPT-2's c_fc / c_proj, stored [in, out]
};

// Where each tensor of a family lives: per-layer names after `<layers><l>.`.
struct DecoderTensorNames {
    std::string prefix = {};   // dropped from stored names when present: "model.", "gpt_neox.", "transformer."
    std::string embed = "embed_tokens";
    std::string positions = {};   // a learned position table (GPT-2's wpe); empty: none
    std::string layers = "layers.";
    std::string attention_norm = "input_layernorm";
    std::string attention_output_norm = {};   // empty: none
    std::string mlp_norm = "post_attention_layernorm";
    std::string mlp_output_norm = {};   // empty: none
    QkvLayout qkv = QkvLayout::separate;
    std::string q = "self_attn.q_proj";
    std::string k = "self_attn.k_proj";
    std::string v = "self_attn.v_proj";
    std::string packed_qkv = {};   // QkvLayout::packed, packed_per_head, conv1d
    std::string out = "self_attn.o_proj";
    std::string q_norm = "self_attn.q_norm";
    std::string k_norm = "self_attn.k_norm";
    MlpLayout mlp = MlpLayout::separate;
    std::string gate = "mlp.gate_proj";
    std::string up = "mlp.up_proj";   // MlpLayout::packed: the gate_up tensor
    std::string down = "mlp.down_proj";
    std::string final_norm = "norm";
    std::string head = "lm_head";
    // Buffers older releases saved with the weights (rotary inv_freq, causal-mask bias),
    // per layer after `<layers><l>.`: loading ignores them.
    std::vector<std::string> ignorable_per_layer = {};
};

struct DecoderFamily {
    std::string model_type;                   // "llama"
    std::vector<std::string> architectures;   // the architectures[0] values it knows; the first is the default
    DecoderTensorNames names;
    // Reads and validates config.json (`f`), refusing what changes the computation and is not implemented.
    DecoderConfig (*read_config)(const HfFields& f);
};

// The weights, as the checkpoint holds them (views of the mapped file where F32).
struct DecoderWeights {
    WeightMatrix embed;       // [V, E]
    WeightMatrix positions;   // [max positions, E], or empty
    Stack stack;
    std::vector<Linear> packed_mlp;   // [L] gate_up [2I, E] where MlpLayout::packed (gate and up are views of it)
    Norm final_norm;                  // [E]
    WeightMatrix head;                // [V, E], or empty: tied to embed
};

class HfDecoderModel final : public Model {
public:
    HfDecoderModel(const DecoderFamily& family, const std::string& folder, const LoadControl& control);

    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override;
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override;
    ModelInput encode_text_after(std::string_view text, const ModelInput& before) const override;
    ModelInput encode_ids_after(std::span<const std::int64_t> ids, const ModelInput& before) const override;
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return stack_head_map(weights_.stack, trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return stack_layer_stages(weights_.stack, trace, layer, disabled_heads, only_head);
    }
    std::vector<OwnedTensor> export_weights() const override;
    std::string output_label(Eigen::Index index) const override;
    Matrix logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const override;

    const DecoderConfig& config() const { return config_; }

private:
    void describe(const std::string& folder, const std::string& head, const HfTensorTable& table,
                  const HfWeights& stored);
    // `ids` embedded, the rows on which they agree with `before`'s from the first on copied
    // from it (a position's embedding is its token's row, scaled, plus its place's).
    ModelInput embed(std::vector<std::int64_t> ids, const ModelInput& before) const;
    // `few_rows`: a run that reads its last rows' logits alone, whose LM head is not laid
    // out to be kept (WeightMatrix::multiply_streamed), the same numbers either way.
    Matrix lm_logits(const Matrix& hidden, bool few_rows = false) const;

    const DecoderFamily& family_;
    DecoderConfig config_;
    DecoderWeights weights_;
    HfMappedFiles mapped_;
    std::unique_ptr<HfTextTokens> tokens_;
    ModelInfo info_;
};

// Opens a checkpoint folder of `family`.
std::unique_ptr<Model> load_hf_decoder(const DecoderFamily& family, const std::string& folder,
                                       const LoadControl& control = {});

}   // namespace headscope
