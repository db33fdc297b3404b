// Mistral (model_type "mistral": Mistral 7B v0.1-v0.3 and fine-tunes): Llama's block with
// a sliding window on every layer (sliding_window; null: none), as modeling_mistral.py.
#include "core/models/hf/families/mistral.h"

#include "core/models/hf/decoder_config.h"

namespace headscope {

namespace {

DecoderConfig read_mistral_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(
        f, mistral_family(), {.intermediate_size = 14336, .num_key_value_heads = 8, .max_position_embeddings = 131072});
    const Eigen::Index window = read_window(f, "sliding_window", 4096);
    for (DecoderLayer& layer : c.layers) layer.window = window;
    c.settings = {{"rope", describe_rotary(c.layers.front().rotary, c.head_width)},
                  {"layers", describe_layers(c.layers)}};
    return c;
}

}   // namespace

const DecoderFamily& mistral_family() {
    static const DecoderFamily family{
        .model_type = "mistral",
        .architectures = {"MistralForCausalLM", "MistralModel"},
        .names = {.prefix = "model.", .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_mistral_config,
    };
    return family;
}

}   // namespace headscope
