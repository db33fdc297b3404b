#pragma once
// Hugging Face GPT-2 checkpoints as a headscope Model, in plain C++: GPT2Model and
// GPT2LMHeadModel, as transformers' modeling_gpt2.py computes them:
//
//   x = wte[ids] + wpe[0 .. T-1]                                              [T, E]
//   per layer h.{l}: x += Attention(ln_1(x)) (causal);  x += MLP(ln_2(x))
//     attn.c_attn: Conv1D [E, 3E] -> q, k, v in that order; attn.c_proj: Conv1D [E, E]
//     mlp.c_fc: Conv1D [E, I], activation_function (gelu_new), mlp.c_proj: Conv1D [I, E]
//   hidden = ln_f(x); logits = hidden wte^T (the LM head, tied to wte)        [T, V]
//
// Conv1D stores its weight [in, out]; it is used as stored (x W), never transposed or
// copied. F32 weights are read in place from the mapped file; F16 / BF16 / F64 ones are
// converted to float once, at load.
// Weights load as stored (F32, F16, BF16 or F64) with or without the "transformer."
// prefix; the causal-mask buffers attn.bias / attn.masked_bias are ignored; lm_head.weight,
// when stored, must be [V, E] and is the head. Text is encoded by the folder's GPT-2
// byte-level BPE (vocab.json + merges.txt, or tokenizer.json), adding no special tokens.

#include "core/base/load_control.h"
#include "core/models/hf/tensors.h"
#include "core/models/model.h"
#include "core/nn/layers.h"
#include "core/nn/run_blocks.h"
#include "core/text/tokenizer/tokenizer.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope {

// GPT2Config (model_type "gpt2"): transformers' field names and defaults (gpt2, the
// 124M model). n_inner absent or null means 4 * n_embd.
struct HfGpt2Config {
    std::string architecture;          // architectures[0], or "" when absent
    Eigen::Index vocab_size = 50257;   // V
    Eigen::Index n_positions = 1024;   // the longest sequence
    Eigen::Index n_embd = 768;         // E
    Eigen::Index n_layer = 12;         // L
    Eigen::Index n_head = 12;          // H; E % H == 0
    Eigen::Index n_inner = 0;          // MLP width; 0 = 4 * n_embd
    std::string activation_function = "gelu_new";
    Activation activation = Activation::gelu_tanh;
    float layer_norm_epsilon = 1e-5f;

    Eigen::Index mlp_width() const { return n_inner > 0 ? n_inner : 4 * n_embd; }
};

// Reads and validates a GPT-2 config.json. Settings this build does not compute
// (scale_attn_weights false, scale_attn_by_inverse_layer_idx true) are refused.
HfGpt2Config read_hf_gpt2_config(const std::string& config_path);

// Names are transformers' own, without the "transformer." prefix; gpt2.cpp's
// bind_tensors lists them.
struct HfGpt2Weights {
    WeightMatrix wte;       // [V, E]
    WeightMatrix wpe;       // [n_positions, E]
    Stack stack;            // h.{l}: ln_1, attn.c_attn (q, k, v packed), attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj
    Norm ln_f;              // [E]
    WeightMatrix lm_head;   // [V, E] when stored apart from wte; empty = tied to wte
};

class HfGpt2Model final : public Model {
public:
    // Reads `folder`: config.json, the weights, and the tokenizer files when present.
    HfGpt2Model(const std::string& folder, const LoadControl& control);

    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override;
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override;
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    // Every weight as float, under transformers' names without the prefix (Conv1D
    // weights back in their stored [in, out] layout).
    std::vector<OwnedTensor> export_weights() const override;
    std::string output_label(Eigen::Index index) const override;   // the token's text

    const HfGpt2Config& config() const { return config_; }

private:
    // The tokenizer, when `dir` has one: vocab.json + merges.txt, or tokenizer.json.
    void read_tokenizer(const std::filesystem::path& dir);
    std::vector<std::string> id_labels(std::span<const std::int64_t> ids) const;
    // info_, once the weights, the head and the tokenizer are read.
    void describe(const std::string& folder, const std::string& architecture, const std::string& lm_head,
                  const HfTensorTable& table, const HfWeights& stored);
    ModelInput embed(std::vector<std::int64_t> ids) const;
    // [T, V] from the final hidden state [T, E].
    Matrix lm_logits(const Matrix& hidden) const;

    HfGpt2Config config_;
    HfGpt2Weights weights_;
    HfMappedFiles mapped_;   // the files F32 weights are read from in place
    std::optional<tokenizer::Tokenizer> tokenizer_;
    std::string tokenizer_files_;   // "vocab.json + merges.txt", "tokenizer.json" or "none"
    ModelInfo info_;
};

// Opens a GPT-2 checkpoint folder (model_type "gpt2").
std::unique_ptr<Model> load_hf_gpt2(const std::string& folder, const LoadControl& control = {});

}   // namespace headscope
