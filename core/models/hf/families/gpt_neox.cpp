// GPT-NeoX (model_type "gpt_neox": Pythia 70M-12B, GPT-NeoX-20B), as modeling_gpt_neox.py:
// LayerNorms with biases, attention and MLP in parallel on the same stream
// (use_parallel_residual), rotary positions on the first rotary_pct of each head,
// q, k and v in one tensor with each head's rows together (query_key_value), a plain
// GELU MLP, an untied head (embed_out).
#include "core/models/hf/families/gpt_neox.h"

#include "core/models/hf/decoder_config.h"

namespace headscope {

namespace {

DecoderConfig read_gpt_neox_config(const HfFields& f) {
    DecoderDefaults d{.vocab_size = 50432,
                      .hidden_size = 6144,
                      .intermediate_size = 24576,
                      .num_hidden_layers = 44,
                      .num_attention_heads = 64,
                      .hidden_act = "gelu"};
    d.rope_theta = f.number("rotary_emb_base", 10000.0);
    DecoderConfig c = read_decoder_basics(f, gpt_neox_family(), d);
    c.norm_kind = NormKind::layer_norm;
    c.norm_bias = true;
    c.norm_eps = read_hf_epsilon(f, "layer_norm_eps", 1e-5f);
    c.gated_mlp = false;
    c.mlp_bias = true;
    c.qkv_bias = c.out_bias = f.boolean("attention_bias", true);
    c.residual = f.boolean("use_parallel_residual", true) ? Residual::parallel : Residual::sequential;
    const double pct = f.number("rotary_pct", f.number("partial_rotary_factor", 0.25));
    if (!(pct > 0 && pct <= 1)) f.fail("rotary_pct", "a number in (0, 1]", pct);
    const auto rotated = static_cast<Eigen::Index>(static_cast<double>(c.head_width) * pct);
    if (rotated < 2 || rotated % 2 != 0) {
        f.fail("rotary_pct", "rotates " + std::to_string(rotated) + " features of each head (expected an even number)");
    }
    if (c.n_kv_heads != c.n_heads) f.fail("num_key_value_heads", "GPT-NeoX has one key/value head per query head");
    const Rotary rotary = read_rotary(f, d.rope_theta, rotated, c.max_tokens);
    for (DecoderLayer& layer : c.layers) layer.rotary = rotary;
    c.settings = {{"rope", describe_rotary(rotary, c.head_width)}};
    return c;
}

}   // namespace

const DecoderFamily& gpt_neox_family() {
    static const DecoderFamily family{
        .model_type = "gpt_neox",
        .architectures = {"GPTNeoXForCausalLM", "GPTNeoXModel"},
        .names = {.prefix = "gpt_neox.",
                  .embed = "embed_in",
                  .qkv = QkvLayout::packed_per_head,
                  .packed_qkv = "attention.query_key_value",
                  .out = "attention.dense",
                  .up = "mlp.dense_h_to_4h",
                  .down = "mlp.dense_4h_to_h",
                  .final_norm = "final_layer_norm",
                  .head = "embed_out",
                  .ignorable_per_layer = {"attention.bias", "attention.masked_bias", "attention.rotary_emb.inv_freq"}},
        .read_config = read_gpt_neox_config,
    };
    return family;
}

}   // namespace headscope
