// Gemma 2 (model_type "gemma2": Gemma 2 2B, 9B, 27B), as modeling_gemma2.py: Gemma's
// layers with norms before and after each sublayer, scores scaled by
// query_pre_attn_scalar^-1/2 and soft-capped (attn_logit_softcapping), logits soft-capped
// (final_logit_softcapping), local sliding-window and global layers alternating (layer
// 0 local), or as layer_types says.
#include "core/models/hf/families/gemma2.h"

#include "core/models/hf/decoder_config.h"
#include "core/models/hf/families/gemma.h"

#include <cmath>

namespace headscope {

namespace {

DecoderConfig read_gemma2_config(const HfFields& f) {
    DecoderConfig c = read_decoder_basics(f, gemma2_family(),
                                          {.vocab_size = 256000,
                                           .hidden_size = 2304,
                                           .intermediate_size = 9216,
                                           .num_hidden_layers = 26,
                                           .num_attention_heads = 8,
                                           .num_key_value_heads = 4,
                                           .head_dim = 256,
                                           .max_position_embeddings = 8192,
                                           .hidden_act = "gelu_pytorch_tanh",
                                           .tie_word_embeddings = true});
    read_gemma_basics(f, c);
    read_gemma_scores(f, c, 50.0, 30.0);
    const Eigen::Index window = read_window(f, "sliding_window", 4096);
    const std::vector<bool> sliding = read_layer_types(f, c.n_layers, [](Eigen::Index l) { return (l + 1) % 2 != 0; });
    for (std::size_t l = 0; l < sliding.size(); ++l) c.layers[l].window = sliding[l] ? window : 0;
    c.settings.emplace_back("rope", describe_rotary(c.layers.front().rotary, c.head_width));
    c.settings.emplace_back("layers", describe_layers(c.layers));
    return c;
}

}   // namespace

void read_gemma_scores(const HfFields& f, DecoderConfig& c, double score_cap, double logit_cap) {
    c.output_norms = true;
    const double scalar = f.number("query_pre_attn_scalar", 256.0);
    if (!(scalar > 0)) f.fail("query_pre_attn_scalar", "a positive number", *f.find("query_pre_attn_scalar"));
    c.score_scale = static_cast<float>(1.0 / std::sqrt(scalar));
    if (score_cap > 0)
        c.score_cap = static_cast<float>(f.written("attn_logit_softcapping") ? f.number("attn_logit_softcapping", 0.0)
                                                                             : score_cap);
    c.logit_cap =
        static_cast<float>(f.written("final_logit_softcapping") ? f.number("final_logit_softcapping", 0.0) : logit_cap);
    if (c.score_cap < 0) f.fail("attn_logit_softcapping", "a positive number or null", c.score_cap);
    if (c.logit_cap < 0) f.fail("final_logit_softcapping", "a positive number or null", c.logit_cap);
    c.settings = {{"query_pre_attn_scalar", hf_number_text(scalar) + " (scores scaled by its inverse square root)"}};
}

const DecoderFamily& gemma2_family() {
    static const DecoderFamily family{
        .model_type = "gemma2",
        .architectures = {"Gemma2ForCausalLM", "Gemma2Model"},
        .names = {.prefix = "model.",
                  .attention_output_norm = "post_attention_layernorm",
                  .mlp_norm = "pre_feedforward_layernorm",
                  .mlp_output_norm = "post_feedforward_layernorm",
                  .ignorable_per_layer = {"self_attn.rotary_emb.inv_freq"}},
        .read_config = read_gemma2_config,
    };
    return family;
}

}   // namespace headscope
