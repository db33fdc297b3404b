// Qwen 2 (model_type "qwen2": Qwen2, Qwen2.5 0.5B-72B), as modeling_qwen2.py: Llama's
// block with biases on q, k and v, and sliding windows on the layers from
// max_window_layers on when use_sliding_window (or as layer_types says).
#include "core/models/hf/families/qwen2.h"

#include "core/models/hf/decoder_config.h"

namespace headscope {

namespace {

DecoderConfig read_qwen2_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(
        f, qwen2_family(), {.vocab_size = 151936, .intermediate_size = 22016, .max_position_embeddings = 32768});
    c.qkv_bias = true;
    refuse_unless(f, "use_mrope", false, "multimodal rotary positions (Qwen2-VL) are not computed");
    read_qwen_windows(f, c);
    c.settings = {{"rope", describe_rotary(c.layers.front().rotary, c.head_width)},
                  {"layers", describe_layers(c.layers)}};
    return c;
}

}   // namespace

void read_qwen_windows(const HfFields& f, DecoderConfig& c) {
    // transformers: sliding_window counts only with use_sliding_window; the layers from
    // max_window_layers on slide, unless layer_types lists them.
    const Eigen::Index window = f.boolean("use_sliding_window", false) ? read_window(f, "sliding_window", 4096) : 0;
    const Eigen::Index first_sliding = f.integer("max_window_layers", 28, 0, 1 << 20);
    const std::vector<bool> sliding =
        read_layer_types(f, c.n_layers, [&](Eigen::Index l) { return window > 0 && l >= first_sliding; });
    for (std::size_t l = 0; l < sliding.size(); ++l) c.layers[l].window = sliding[l] ? window : 0;
}

const DecoderFamily& qwen2_family() {
    static const DecoderFamily family{
        .model_type = "qwen2",
        .architectures = {"Qwen2ForCausalLM", "Qwen2Model"},
        .names = {.prefix = "model.", .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_qwen2_config,
    };
    return family;
}

}   // namespace headscope
