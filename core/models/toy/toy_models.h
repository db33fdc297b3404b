#pragma once
// The built-in demo models: small pre-LN encoders that need no download and run in
// milliseconds.
//  - toy-text: words (core/text/text.h) -> a seeded vector per distinct word + sinusoidal
//    positions -> L blocks.
//  - toy-vit: an image -> Pillow-bilinear resize to image_size, rescale and normalise
//    (mean = std = 0.5) -> P x P patches through a stride-P convolution -> [CLS] +
//    patches + learned positions -> L blocks.
// Two initialisations: `random`, as the tutorials initialise (nn.Linear's uniform,
// normal embeddings), which mostly shows noise; and `structured` (the default), whose
// heads are built to do something a person can see and name: previous-token, same-
// token, local-window, first-token, same-colour, same-row heads... ModelInfo::head_roles
// says what each head was built to do.

#include "core/models/model.h"

#include <cstdint>
#include <memory>
#include <string>

namespace headscope {

enum class ToyInit { structured, random };

// The block a demo text model is built from.
enum class ToyArch {
    classic,   // the tutorials' pre-LN encoder: LayerNorm, GELU MLP, sinusoidal positions in the embeddings
    modern,    // a Llama-style decoder: RMSNorm, SwiGLU, rotary positions, 2 query heads per key/value head, causal
};

struct ToyConfig {
    Eigen::Index width = 64;         // E
    Eigen::Index n_heads = 4;        // H
    Eigen::Index n_layers = 2;       // L
    Eigen::Index mlp_ratio = 4;      // MLP hidden width = mlp_ratio * E
    Eigen::Index max_tokens = 512;   // toy-text: the longest sentence, in tokens
    int image_size = 224;            // toy-vit: input side in pixels
    int patch_size = 16;             // toy-vit: P
    bool bias = true;                // biases in every projection
    std::uint64_t seed = 0;
    ToyInit init = ToyInit::structured;   // classic only: the modern model's weights are random
    ToyArch arch = ToyArch::classic;      // toy-text
};

// Throws headscope::Error naming the setting when the config cannot form a model
// (E not divisible by H, odd or tiny head width, P not dividing the image size, ...).
void validate_toy_config(const ToyConfig& config, bool image_model);

std::unique_ptr<Model> make_toy_text(const ToyConfig& config);
std::unique_ptr<Model> make_toy_vit(const ToyConfig& config);

// The id toy-text gives a word: FNV-1a (32-bit) of its bytes, top bit cleared.
std::int64_t toy_text_token_id(std::string_view word);
// Ids toy-text accepts through encode_ids: 0 <= id < 2^31.
inline constexpr std::int64_t toy_text_id_limit = std::int64_t{1} << 31;

}   // namespace headscope
