// BART (model_type "bart": facebook/bart-base, bart-large, bart-large-cnn, distilbart), as
// modeling_bart.py computes it: one embedding (`shared`) for both stacks, times sqrt(d_model)
// when scale_embedding; learned positions whose table starts 2 rows in (position p reads row
// p + 2); a LayerNorm of the embeddings (layernorm_embedding); post-norm blocks (each
// sublayer's sum normalised) with biases everywhere, attention scaled by 1/sqrt(head width),
// a plain MLP (activation_function, GELU); the head tied to `shared`, plus final_logits_bias.
#include "core/models/hf/families/bart.h"

#include <cmath>

namespace headscope {

namespace {

// A field both stacks name for themselves, which the one encoder-decoder needs equal.
std::int64_t same_in_both(const HfFields& f, const std::string& encoder_field, const std::string& decoder_field,
                          std::int64_t fallback, std::int64_t hi) {
    const std::int64_t encoder = f.integer(encoder_field, fallback, 1, hi);
    const std::int64_t decoder = f.integer(decoder_field, fallback, 1, hi);
    if (encoder != decoder) {
        f.fail(decoder_field, "equal to " + encoder_field + " (" + std::to_string(encoder) +
                                  "): an encoder and a decoder of different shapes are not supported, got " +
                                  std::to_string(decoder));
    }
    return encoder;
}

Seq2SeqConfig read_bart_config(const HfFields& f) {
    Seq2SeqConfig c;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "bart") f.fail("model_type", "expected 'bart', got " + hf_quoted(c.model_type));
    c.architecture = read_hf_architecture(f, "bart", bart_family().architectures);
    if (c.architecture.empty()) c.architecture = "BartForConditionalGeneration";
    c.vocab_size = f.integer("vocab_size", 50265, 1, 1 << 24);
    c.width = f.integer("d_model", 1024, 1, 65536);
    c.n_heads = same_in_both(f, "encoder_attention_heads", "decoder_attention_heads", 16, 65536);
    c.heads_field = "encoder_attention_heads";
    check_hf_head_split(f.file(), c.width, "d_model", c.n_heads, "encoder_attention_heads");
    c.head_width = c.width / c.n_heads;
    c.mlp_width = same_in_both(f, "encoder_ffn_dim", "decoder_ffn_dim", 4096, 1 << 20);
    c.mlp_field = "encoder_ffn_dim";
    c.encoder_layers = f.integer("encoder_layers", 12, 1, 1024);
    c.layers_field = "encoder_layers";
    c.decoder_layers = f.integer("decoder_layers", 12, 1, 1024);
    c.max_tokens = f.integer("max_position_embeddings", 1024, 1, 1 << 20);
    c.max_tokens_field = "max_position_embeddings";
    c.position_offset = 2;
    c.learned_positions = c.max_tokens + c.position_offset;
    c.norm_kind = NormKind::layer_norm;
    c.norm_eps = 1e-5f;   // nn.LayerNorm's default: BART's config has no field for it
    c.norm_placement = NormPlacement::post;
    if (f.boolean("normalize_before", false))
        f.fail("normalize_before", "false (pre-norm BART is mBART's, not supported)", true);
    if (f.boolean("add_final_layer_norm", false))
        f.fail("add_final_layer_norm", "false (mBART's final norms are not supported)", true);
    if (f.boolean("add_bias_logits", false)) f.fail("add_bias_logits", "false (not supported)", true);
    c.embedding_norm = true;
    c.biases = true;
    const bool scaled = f.boolean("scale_embedding", false);
    if (scaled) c.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(c.width)));
    const std::string activation = f.string("activation_function", "gelu");
    c.activation = read_hf_activation(f, activation, "activation_function");
    c.gated_mlp = false;
    if (!f.boolean("tie_word_embeddings", true)) f.fail("tie_word_embeddings", "true (BART ties its head)", false);
    c.tied_head = true;
    c.logits_bias = true;
    c.pad_id = f.integer("pad_token_id", 1, 0, c.vocab_size - 1);
    c.end_id = f.integer("eos_token_id", 2, 0, c.vocab_size - 1);
    c.decoder_start_id = f.integer("decoder_start_token_id", 2, 0, c.vocab_size - 1);
    c.settings = {{"activation_function", activation},
                  {"scale_embedding", scaled ? "true" : "false"},
                  {"max_position_embeddings", std::to_string(c.max_tokens)}};
    return c;
}

Seq2SeqStackNames bart_stack(bool decoder) {
    Seq2SeqStackNames n{
        .stack = decoder ? "decoder." : "encoder.",
        .layers = "layers.",
        .positions = "embed_positions",
        .embedding_norm = "layernorm_embedding",
        .self_norm = "self_attn_layer_norm",
        .self = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj"},
        .mlp_norm = "final_layer_norm",
        .up = "fc1",
        .down = "fc2",
    };
    if (decoder) {
        n.cross_norm = "encoder_attn_layer_norm";
        n.cross = {"encoder_attn.q_proj", "encoder_attn.k_proj", "encoder_attn.v_proj", "encoder_attn.out_proj"};
    }
    return n;
}

Seq2SeqTensorNames bart_names(const Seq2SeqConfig&) {
    // Stored under "model." (BartForConditionalGeneration) or not (BartModel): the loader
    // drops the prefix; the head and its bias sit outside it.
    return {.prefix = "model.",
            .shared = "shared",
            .encoder_embed = "encoder.embed_tokens",
            .decoder_embed = "decoder.embed_tokens",
            .encoder = bart_stack(false),
            .decoder = bart_stack(true),
            .head = "lm_head",
            .logits_bias = "final_logits_bias"};
}

}   // namespace

const Seq2SeqFamily& bart_family() {
    static const Seq2SeqFamily family{
        .model_type = "bart",
        .architectures = {"BartForConditionalGeneration", "BartModel"},
        .names = bart_names,
        .read_config = read_bart_config,
    };
    return family;
}

}   // namespace headscope
