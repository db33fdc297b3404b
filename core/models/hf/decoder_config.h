#pragma once
// What the decoder families' config.json readers share: the Llama-style fields most of
// them carry, RoPE settings (`rope_scaling`, or `rope_parameters` as newer transformers
// write them), and which layers slide (`layer_types`, or the family's own rule). Each
// family's reader (core/models/hf/<family>.cpp) starts from these and adds what differs.

#include "core/models/hf/config_fields.h"
#include "core/models/hf/decoder.h"

#include <functional>
#include <string>
#include <vector>

namespace headscope {

// transformers' defaults for the Llama-style fields of one family's configuration class.
struct DecoderDefaults {
    Eigen::Index vocab_size = 32000;
    Eigen::Index hidden_size = 4096;
    Eigen::Index intermediate_size = 11008;
    Eigen::Index num_hidden_layers = 32;
    Eigen::Index num_attention_heads = 32;
    Eigen::Index num_key_value_heads = 0;   // 0: None, the query heads
    Eigen::Index head_dim = 0;              // 0: None, hidden_size / num_attention_heads
    Eigen::Index max_position_embeddings = 2048;
    double rms_norm_eps = 1e-6;
    double rope_theta = 10000.0;
    std::string hidden_act = "silu";
    bool tie_word_embeddings = false;
};

// Reads model_type (must be `family.model_type`), architectures, vocab_size, hidden_size,
// intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim,
// max_position_embeddings, rms_norm_eps, hidden_act, tie_word_embeddings, and lays out one
// global layer per num_hidden_layers with rotary positions from rope_theta / rope_scaling
// (or rope_parameters) over the whole head. Checks that the heads divide as they must.
DecoderConfig read_decoder_basics(const HfFields& f, const DecoderFamily& family, const DecoderDefaults& d);

// config.json's RoPE settings for layers of `kind` ("full_attention" or
// "sliding_attention"; rope_parameters may hold one set per kind): the base (rope_theta, or
// `theta_fallback`) and the scaling. `rotated` is the rotated width of a head.
Rotary read_rotary(const HfFields& f, double theta_fallback, Eigen::Index rotated, Eigen::Index max_positions,
                   const std::string& kind = "full_attention");

// Whether each layer slides: config.json's layer_types ("sliding_attention" /
// "full_attention", one per layer) when present, else `is_sliding(l)`.
std::vector<bool> read_layer_types(const HfFields& f, Eigen::Index n_layers,
                                   const std::function<bool(Eigen::Index)>& is_sliding);

// A window W read from `field`: an integer >= 1; null: none (0); absent: `fallback`, the class default.
Eigen::Index read_window(const HfFields& f, const std::string& field, Eigen::Index fallback);

// Refuses `field` unless it is absent, null or `allowed` (a setting that would change the
// computation and is not implemented): one line naming it.
void refuse_unless(const HfFields& f, const std::string& field, const nlohmann::json& allowed, const std::string& why);

// "local W=4 (layers 0, 2), global (layers 1, 3)", for `info`.
std::string describe_layers(const std::vector<DecoderLayer>& layers);

// "llama3, factor 32, ..." for `info`.
std::string describe_rotary(const Rotary& rotary, Eigen::Index head_width);

}   // namespace headscope
