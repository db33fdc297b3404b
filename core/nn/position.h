#pragma once
// Positions applied to queries and keys before the scores: rotary embeddings (RoPE), as
// transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb compute them. Each head's
// first `rotary_width` features (all when 0; partial rotary, as Phi and Pythia, rotates
// fewer) are split in two halves, and the pair (x_i, x_{i + r/2}) is turned by the angle
// position * theta^(-2i / r): NeoX's "rotate_half" layout, which Llama, Qwen, Mistral,
// Gemma and Pythia checkpoints all use.

#include "core/tensor/matrix.h"

namespace headscope {

struct Rotary {
    double theta = 0.0;              // rope_theta; 0: no rotary positions
    Eigen::Index rotary_width = 0;   // features of each head that turn (even); 0: the whole head

    bool active() const { return theta > 0.0; }
};

// Turns each of x's heads ([T, n_heads * Dh], head h in columns h*Dh ..) in place; row t
// sits at position `first_position + t` (prefix reuse computes rows after kept ones).
void apply_rotary(const Rotary& rotary, MatrixRef x, Eigen::Index n_heads, Eigen::Index first_position);

}   // namespace headscope
