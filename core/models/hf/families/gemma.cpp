// Gemma (model_type "gemma": Gemma 2B, 7B), as modeling_gemma.py: RMSNorm scaling by
// (1 + w), a GeGLU MLP, embeddings scaled by sqrt(hidden_size), multi-query attention on
// the 2B model. The MLP's activation is hidden_activation, else hidden_act (transformers
// 4.38-4.46 forced the tanh GELU whatever the config said; the current release reads the config).
#include "core/models/hf/families/gemma.h"

#include "core/models/hf/decoder_config.h"

#include <cmath>

namespace headscope {

namespace {

DecoderConfig read_gemma_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(f, gemma_family(),
                                          {.vocab_size = 256000,
                                           .hidden_size = 3072,
                                           .intermediate_size = 24576,
                                           .num_hidden_layers = 28,
                                           .num_attention_heads = 16,
                                           .head_dim = 256,
                                           .max_position_embeddings = 8192,
                                           .hidden_act = "gelu_pytorch_tanh",
                                           .tie_word_embeddings = true});
    read_gemma_basics(f, c);
    c.settings = {{"rope", describe_rotary(c.layers.front().rotary, c.head_width)}};
    return c;
}

}   // namespace

void read_gemma_basics(const HfFields& f, DecoderConfig& c) {
    if (f.find("hidden_activation") != nullptr) {
        c.activation = read_hf_activation(f, f.string("hidden_activation", ""), "hidden_activation");
    }
    c.qkv_bias = c.out_bias = f.boolean("attention_bias", false);
    c.norm_kind = NormKind::rms_norm_plus_one;
    // The normaliser is a tensor of the embeddings' dtype: sqrt(E) rounded to float.
    c.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(c.width)));
}

const DecoderFamily& gemma_family() {
    static const DecoderFamily family{
        .model_type = "gemma",
        .architectures = {"GemmaForCausalLM", "GemmaModel"},
        .names = {.prefix = "model.", .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_gemma_config,
    };
    return family;
}

}   // namespace headscope
