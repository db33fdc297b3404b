#pragma once
// Reading one attention layer's weights from a .safetensors file, in either of the
// two layouts of docs/cli.md:
//  - PyTorch nn.MultiheadAttention: in_proj_weight [3E, E] (+ in_proj_bias [3E]), or
//    q_proj_weight [E, E], k_proj_weight [E, Ek], v_proj_weight [E, Ev] when the
//    key/value width differs; out_proj.weight [E, E] (+ out_proj.bias [E]);
//  - separate projections: q_proj.weight [D, E], k_proj.weight [D, Ek],
//    v_proj.weight [D, Ev], out_proj.weight [E, D], each with an optional .bias.

#include "core/nn/attention.h"
#include "core/tensor/safetensors.h"

namespace headscope {

enum class AttentionLayout { torch_packed, torch_separate_kv, separate_projections };

struct LoadedAttention {
    AttentionWeights weights;
    AttentionLayout layout;
};

// Throws headscope::Error naming the file and tensor on a missing, unknown,
// mis-shaped or non-floating tensor, on a file holding both layouts, and when the
// inner width is not divisible by n_heads.
LoadedAttention load_attention_weights(const SafetensorsFile& file, Eigen::Index n_heads);

}   // namespace headscope
