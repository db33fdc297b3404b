// Gemma 3's text model (model_type "gemma3_text": Gemma 3 1B, and the text tower of the
// larger ones), as modeling_gemma3.py: Gemma 2's layers with q and k norms, local layers
// (sliding window, rotary base rope_local_base_freq, no scaling) and global layers
// (rope_theta with rope_scaling) in a pattern: every sliding_window_pattern-th layer is
// global, or as layer_types says. attn_logit_softcapping is carried by the configs but the
// current transformers no longer applies it, so neither does this.
#include "core/models/hf/families/gemma3.h"

#include "core/models/hf/decoder_config.h"
#include "core/models/hf/families/gemma.h"
#include "core/models/hf/families/gemma2.h"

namespace headscope {

namespace {

DecoderConfig read_gemma3_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(f, gemma3_family(),
                                          {.vocab_size = 262208,
                                           .hidden_size = 2304,
                                           .intermediate_size = 9216,
                                           .num_hidden_layers = 26,
                                           .num_attention_heads = 8,
                                           .num_key_value_heads = 4,
                                           .head_dim = 256,
                                           .max_position_embeddings = 131072,
                                           .rope_theta = 1000000.0,
                                           .hidden_act = "gelu_pytorch_tanh",
                                           .tie_word_embeddings = true});
    read_gemma_basics(f, c);
    read_gemma_scores(f, c, 0.0, 0.0);
    c.qk_norm = true;
    const Eigen::Index window = read_window(f, "sliding_window", 4096);
    const Eigen::Index pattern = f.integer("sliding_window_pattern", 6, 1, 1 << 20);
    const std::vector<bool> sliding =
        read_layer_types(f, c.n_layers, [&](Eigen::Index l) { return (l + 1) % pattern != 0; });
    Rotary local;
    if (f.find("rope_parameters") != nullptr) {
        local = read_rotary(f, 10000.0, c.head_width, c.max_tokens, "sliding_attention");
    } else {
        local.theta = f.number("rope_local_base_freq", 10000.0);
        if (!(local.theta > 0)) f.fail("rope_local_base_freq", "a positive number", local.theta);
        local.rotary_width = c.head_width;
    }
    const Rotary global = c.layers.front().rotary;
    for (std::size_t l = 0; l < sliding.size(); ++l) {
        c.layers[l] = sliding[l] ? DecoderLayer{window, local} : DecoderLayer{0, global};
    }
    c.settings.emplace_back("rope", "local layers: " + describe_rotary(local, c.head_width) +
                                        "; global layers: " + describe_rotary(global, c.head_width));
    c.settings.emplace_back("layers", describe_layers(c.layers));
    c.settings.emplace_back("qk_norm", "RMSNorm (1 + w) of each q and k head before the rotation");
    return c;
}

}   // namespace

const DecoderFamily& gemma3_family() {
    static const DecoderFamily family{
        .model_type = "gemma3_text",
        .architectures = {"Gemma3ForCausalLM", "Gemma3TextModel"},
        .names = {.prefix = "model.",
                  .attention_output_norm = "post_attention_layernorm",
                  .mlp_norm = "pre_feedforward_layernorm",
                  .mlp_output_norm = "post_feedforward_layernorm",
                  .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_gemma3_config,
    };
    return family;
}

}   // namespace headscope
