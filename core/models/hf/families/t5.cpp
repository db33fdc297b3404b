// T5 (model_type "t5": t5-small/base/large, T5 v1.1, Flan-T5), as modeling_t5.py computes it:
// one embedding (`shared`) for both stacks and no positions in it; every attention unscaled,
// with a bias by bucketed relative position added to the self-attention scores (a table in
// each stack's first layer, read by the others; bidirectional in the encoder, causal in the
// decoder; none in the cross-attention); RMS norms without biases before each sublayer and
// after each stack; no biases anywhere; a ReLU MLP (feed_forward_proj "relu", T5 v1.0) or a
// gated GELU one ("gated-gelu": v1.1, Flan-T5). A head tied to `shared` (v1.0) reads the
// hidden state times d_model^-0.5.
#include "core/models/hf/families/t5.h"

#include <cmath>

namespace headscope {

namespace {

// feed_forward_proj: "relu", "gelu", "gated-gelu", "gated-silu", ... as T5Config splits it.
void read_feed_forward(const HfFields& f, Seq2SeqConfig& c) {
    const std::string proj = f.string("feed_forward_proj", "relu");
    const bool gated = proj.rfind("gated-", 0) == 0;
    const std::string act = gated ? proj.substr(6) : proj;
    if (act.empty() || act.find('-') != std::string::npos) {
        f.fail("feed_forward_proj",
               "an activation, or 'gated-' and one (relu, gated-gelu, ...), got " + hf_quoted(proj));
    }
    c.gated_mlp = gated;
    // T5Config turns "gated-gelu" into gelu_new, for backwards compatibility.
    c.activation = proj == "gated-gelu" ? Activation::gelu_tanh : read_hf_activation(f, act, "feed_forward_proj");
    c.settings.emplace_back("feed_forward_proj", proj);
}

Seq2SeqConfig read_t5_config(const HfFields& f) {
    Seq2SeqConfig c;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "t5") f.fail("model_type", "expected 't5', got " + hf_quoted(c.model_type));
    c.architecture = read_hf_architecture(f, "t5", t5_family().architectures);
    if (c.architecture.empty()) c.architecture = "T5ForConditionalGeneration";
    c.vocab_size = f.integer("vocab_size", 32128, 1, 1 << 24);
    c.width = f.integer("d_model", 512, 1, 65536);
    c.head_width = f.integer("d_kv", 64, 1, 65536);
    c.n_heads = f.integer("num_heads", 8, 1, 65536);
    c.heads_field = "num_heads";
    c.mlp_width = f.integer("d_ff", 2048, 1, 1 << 20);
    c.mlp_field = "d_ff";
    c.encoder_layers = f.integer("num_layers", 6, 1, 1024);
    c.layers_field = "num_layers";
    c.decoder_layers = f.integer("num_decoder_layers", c.encoder_layers, 1, 1024);
    // Relative positions set no longest input; n_positions is a note, not a limit.
    c.max_tokens = 1 << 16;
    c.max_tokens_field = "relative positions (no limit of their own)";
    c.norm_kind = NormKind::rms_norm;
    c.norm_eps = read_hf_epsilon(f, "layer_norm_epsilon", 1e-6f);
    c.norm_placement = NormPlacement::pre;
    c.final_norms = true;
    c.biases = false;
    c.score_scale = 1.0f;
    c.position_buckets = f.integer("relative_attention_num_buckets", 32, 4, 1 << 16);
    // The causal buckets' exact half must end before the log-spaced ones reach max_distance.
    c.position_max_distance = f.integer("relative_attention_max_distance", 128, c.position_buckets / 2 + 1, 1 << 24);
    read_feed_forward(f, c);
    c.tied_head = f.boolean("tie_word_embeddings", true);
    if (c.tied_head) c.head_scale = static_cast<float>(std::pow(static_cast<double>(c.width), -0.5));
    c.end_id = f.integer("eos_token_id", 1, 0, c.vocab_size - 1);
    c.pad_id = f.integer("pad_token_id", 0, 0, c.vocab_size - 1);
    c.decoder_start_id = f.integer("decoder_start_token_id", c.pad_id, 0, c.vocab_size - 1);
    c.settings.emplace_back("relative_attention_num_buckets", std::to_string(c.position_buckets));
    c.settings.emplace_back("relative_attention_max_distance", std::to_string(c.position_max_distance));
    return c;
}

Seq2SeqStackNames t5_stack(const Seq2SeqConfig& c, bool decoder) {
    // The decoder's MLP sublayer comes after its cross-attention: layer.2, not layer.1.
    const std::string mlp = decoder ? "layer.2." : "layer.1.";
    Seq2SeqStackNames n{
        .stack = decoder ? "decoder." : "encoder.",
        .layers = "block.",
        .self_norm = "layer.0.layer_norm",
        .self = {"layer.0.SelfAttention.q", "layer.0.SelfAttention.k", "layer.0.SelfAttention.v",
                 "layer.0.SelfAttention.o"},
        .relative_bias = "layer.0.SelfAttention.relative_attention_bias",
        .mlp_norm = mlp + "layer_norm",
        .gate = c.gated_mlp ? mlp + "DenseReluDense.wi_0" : "",
        .up = mlp + (c.gated_mlp ? "DenseReluDense.wi_1" : "DenseReluDense.wi"),
        .down = mlp + "DenseReluDense.wo",
        .final_norm = "final_layer_norm",
    };
    if (decoder) {
        n.cross_norm = "layer.1.layer_norm";
        n.cross = {"layer.1.EncDecAttention.q", "layer.1.EncDecAttention.k", "layer.1.EncDecAttention.v",
                   "layer.1.EncDecAttention.o"};
        // Early releases (t5-small among them) saved a bias table for the first cross-attention,
        // which transformers never reads.
        n.ignorable = {"block.0.layer.1.EncDecAttention.relative_attention_bias.weight"};
    }
    return n;
}

Seq2SeqTensorNames t5_names(const Seq2SeqConfig& c) {
    return {.shared = "shared",
            .encoder_embed = "encoder.embed_tokens",
            .decoder_embed = "decoder.embed_tokens",
            .encoder = t5_stack(c, false),
            .decoder = t5_stack(c, true),
            .head = "lm_head"};
}

}   // namespace

const Seq2SeqFamily& t5_family() {
    static const Seq2SeqFamily family{
        .model_type = "t5",
        .architectures = {"T5ForConditionalGeneration", "T5Model"},
        .names = t5_names,
        .read_config = read_t5_config,
    };
    return family;
}

}   // namespace headscope
