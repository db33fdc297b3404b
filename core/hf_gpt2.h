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

#include "core/bpe_tokenizer.h"
#include "core/hf_config.h"
#include "core/hf_tensors.h"
#include "core/layers.h"
#include "core/load_control.h"
#include "core/model.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope {

// One block; each member names its tensors under "h.{l}.".
struct HfGpt2LayerWeights {
    LayerNorm ln_1;               // ln_1.weight / .bias                                    [E]
    AttentionWeights attention;   // attn.c_attn.weight [E, 3E] / .bias [3E] split into q, k, v;
                                  // attn.c_proj.weight [E, E] / .bias [E]; all as Linear [out, in]
    LayerNorm ln_2;               // ln_2.weight / .bias                                    [E]
    Linear c_fc;                  // mlp.c_fc.weight [E, I] / .bias [I], held as [I, E]
    Linear c_proj;                // mlp.c_proj.weight [I, E] / .bias [E], held as [E, I]
};

// Names are transformers' own, without the "transformer." prefix.
struct HfGpt2Weights {
    WeightMatrix wte;                         // wte.weight [V, E]
    WeightMatrix wpe;                         // wpe.weight [n_positions, E]
    std::vector<HfGpt2LayerWeights> layers;   // h.{l}.*   [L]
    LayerNorm ln_f;                           // ln_f.weight / .bias [E]
    WeightMatrix lm_head;                     // lm_head.weight [V, E] when stored apart; empty = wte
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
    const std::optional<BpeTokenizer>& tokenizer() const { return tokenizer_; }

private:
    ModelInput embed(std::vector<std::int64_t> ids) const;
    // x += MLP(LN2(x)), the second half of a block.
    void mlp_forward_inplace(const HfGpt2LayerWeights& layer, Matrix& x) const;
    // [T, V] from the final hidden state [T, E].
    Matrix lm_logits(const Matrix& hidden) const;
    // RunOptions::prefix_from: only the positions after the kept prefix are computed.
    ModelTrace forward_after_prefix(const ModelInput& input, const RunOptions& options, ModelTrace trace,
                                    AttentionOptions attention_options) const;

    HfGpt2Config config_;
    HfGpt2Weights weights_;
    HfMappedFiles mapped_;   // the files F32 weights are read from in place
    std::optional<BpeTokenizer> tokenizer_;
    std::string tokenizer_files_;   // "vocab.json + merges.txt", "tokenizer.json" or "none"
    ModelInfo info_;
};

// Opens a GPT-2 checkpoint folder (model_type "gpt2").
std::unique_ptr<Model> load_hf_gpt2(const std::string& folder, const LoadControl& control = {});

}   // namespace headscope
