// Llama (model_type "llama": Llama 2, 3, 3.1, 3.2; TinyLlama; SmolLM; Vicuna and other
// fine-tunes), as transformers' modeling_llama.py computes it: RMSNorm, SwiGLU, rotary
// positions with any rope_scaling, grouped-query attention, optional biases.
#include "core/models/hf/families/llama.h"

#include "core/models/hf/decoder_config.h"

namespace headscope {

namespace {

DecoderConfig read_llama_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(f, llama_family(), {});
    c.qkv_bias = c.out_bias = f.boolean("attention_bias", false);
    c.mlp_bias = f.boolean("mlp_bias", false);
    c.settings = {{"rope", describe_rotary(c.layers.front().rotary, c.head_width)}};
    return c;
}

}   // namespace

const DecoderFamily& llama_family() {
    static const DecoderFamily family{
        .model_type = "llama",
        .architectures = {"LlamaForCausalLM", "LlamaModel"},
        .names = {.prefix = "model.", .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_llama_config,
    };
    return family;
}

}   // namespace headscope
