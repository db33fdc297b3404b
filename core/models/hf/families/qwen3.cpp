// Qwen 3 (model_type "qwen3": Qwen3 0.6B-32B), as modeling_qwen3.py: Qwen 2's layers with
// each query and key head RMS-normalised before the rotation (q_norm, k_norm), a head
// width of its own (head_dim, not hidden_size / heads) and biases only when attention_bias.
#include "core/models/hf/families/qwen3.h"

#include "core/models/hf/decoder_config.h"
#include "core/models/hf/families/qwen2.h"

namespace headscope {

namespace {

DecoderConfig read_qwen3_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(
        f, qwen3_family(),
        {.vocab_size = 151936, .intermediate_size = 22016, .head_dim = 128, .max_position_embeddings = 32768});
    c.qkv_bias = c.out_bias = f.boolean("attention_bias", false);
    c.qk_norm = true;
    read_qwen_windows(f, c);
    c.settings = {{"rope", describe_rotary(c.layers.front().rotary, c.head_width)},
                  {"layers", describe_layers(c.layers)},
                  {"qk_norm", "RMSNorm of each q and k head before the rotation"}};
    return c;
}

}   // namespace

const DecoderFamily& qwen3_family() {
    static const DecoderFamily family{
        .model_type = "qwen3",
        .architectures = {"Qwen3ForCausalLM", "Qwen3Model"},
        .names = {.prefix = "model.", .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_qwen3_config,
    };
    return family;
}

}   // namespace headscope
