// GPT-2 (model_type "gpt2": GPT2Model, GPT2LMHeadModel), as modeling_gpt2.py computes it:
// learned positions (wpe) added to the token embeddings, pre-LN blocks of LayerNorms with
// biases, q, k and v in one Conv1D (c_attn, stored [in, out] and used as stored), a plain
// MLP (activation_function, gelu_new), the head tied to wte. Older transformers saved the
// causal-mask buffers attn.bias / attn.masked_bias with the weights: they are ignored.
#include "core/models/hf/families/gpt2.h"

#include "core/models/hf/decoder_config.h"

namespace headscope {

namespace {

DecoderConfig read_gpt2_config(const HfFields& f) {
    DecoderConfig c;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "gpt2") f.fail("model_type", "expected 'gpt2', got " + hf_quoted(c.model_type));
    c.architecture = read_hf_architecture(f, "gpt2", gpt2_family().architectures);
    if (c.architecture.empty()) c.architecture = "GPT2LMHeadModel";
    c.vocab_size = f.integer("vocab_size", 50257, 1, 1 << 24);
    c.learned_positions = c.max_tokens = f.integer("n_positions", 1024, 1, 1 << 20);
    c.max_tokens_field = "n_positions";
    c.width = f.integer("n_embd", 768, 1, 65536);
    c.n_layers = f.integer("n_layer", 12, 1, 1024);
    c.n_heads = c.n_kv_heads = f.integer("n_head", 12, 1, 65536);
    check_hf_head_split(f.file(), c.width, "n_embd", c.n_heads, "n_head");
    c.head_width = c.width / c.n_heads;
    const Eigen::Index inner = f.integer("n_inner", 0, 1, 1 << 20);
    c.mlp_width = inner > 0 ? inner : 4 * c.width;
    c.width_field = "n_embd";
    c.mlp_field = inner > 0 ? "n_inner" : "4 * n_embd";
    const std::string activation = f.string("activation_function", "gelu_new");
    c.activation = read_hf_activation(f, activation, "activation_function");
    c.norm_kind = NormKind::layer_norm;
    c.norm_bias = true;
    c.norm_eps = read_hf_epsilon(f, "layer_norm_epsilon", 1e-5f);
    if (!f.boolean("scale_attn_weights", true)) {
        f.fail("scale_attn_weights", "false is not supported (scores are always divided by sqrt(head width))");
    }
    if (f.boolean("scale_attn_by_inverse_layer_idx", false)) {
        f.fail("scale_attn_by_inverse_layer_idx", "true is not supported");
    }
    c.gated_mlp = false;
    c.tied_head = true;
    c.layers.assign(static_cast<std::size_t>(c.n_layers), DecoderLayer{});
    c.settings = {{"activation_function", activation},
                  {"layer_norm_epsilon", hf_number_text(c.norm_eps)},
                  {"n_positions", std::to_string(c.max_tokens)}};
    return c;
}

}   // namespace

const DecoderFamily& gpt2_family() {
    static const DecoderFamily family{
        .model_type = "gpt2",
        .architectures = {"GPT2LMHeadModel", "GPT2Model"},
        .names = {.prefix = "transformer.",
                  .embed = "wte",
                  .positions = "wpe",
                  .layers = "h.",
                  .attention_norm = "ln_1",
                  .mlp_norm = "ln_2",
                  .qkv = QkvLayout::conv1d,
                  .packed_qkv = "attn.c_attn",
                  .out = "attn.c_proj",
                  .mlp = MlpLayout::conv1d,
                  .up = "mlp.c_fc",
                  .down = "mlp.c_proj",
                  .final_norm = "ln_f",
                  .head = "lm_head",
                  .ignorable_per_layer = {"attn.bias", "attn.masked_bias"}},
        .read_config = read_gpt2_config,
    };
    return family;
}

}   // namespace headscope
