// Phi-3 (model_type "phi3": Phi-3 and Phi-3.5 mini / medium), as modeling_phi3.py: Llama's
// block with q, k and v in one tensor (qkv_proj) and gate and up in one (gate_up_proj),
// partial rotary (partial_rotary_factor), LongRoPE on the long-context checkpoints
// (original_max_position_embeddings, short and long factors), a sliding window where
// the config sets one.
#include "core/models/hf/families/phi3.h"

#include "core/models/hf/decoder_config.h"

namespace headscope {

namespace {

DecoderConfig read_phi3_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(
        f, phi3_family(),
        {.vocab_size = 32064, .hidden_size = 3072, .intermediate_size = 8192, .max_position_embeddings = 4096});
    const Eigen::Index window = read_window(f, "sliding_window", 0);
    for (DecoderLayer& layer : c.layers) layer.window = window;
    const Rotary& rotary = c.layers.front().rotary;
    c.settings = {{"rope", describe_rotary(rotary, c.head_width)}, {"layers", describe_layers(c.layers)}};
    return c;
}

}   // namespace

const DecoderFamily& phi3_family() {
    static const DecoderFamily family{
        .model_type = "phi3",
        .architectures = {"Phi3ForCausalLM", "Phi3Model"},
        .names = {.prefix = "model.",
                  .qkv = QkvLayout::packed,
                  .packed_qkv = "self_attn.qkv_proj",
                  .mlp = MlpLayout::packed,
                  .up = "mlp.gate_up_proj",
                  .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_phi3_config,
    };
    return family;
}

}   // namespace headscope
