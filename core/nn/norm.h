#pragma once
// The norms of transformer blocks, on row-major [T, C] activations, as PyTorch and
// transformers define them: LayerNorm, RMSNorm, and Gemma's RMSNorm with a (1 + w) scale.

#include "core/tensor/matrix.h"

namespace headscope {

enum class NormKind {
    layer_norm,          // (x - mean) / sqrt(var + eps) * w + b   (nn.LayerNorm; b may be absent)
    rms_norm,            // x / sqrt(mean(x^2) + eps) * w          (LlamaRMSNorm)
    rms_norm_plus_one,   // x / sqrt(mean(x^2) + eps) * (1 + w)    (GemmaRMSNorm)
};

struct Norm {
    NormKind kind = NormKind::layer_norm;
    Vector weight;       // [C] (gamma)
    Vector bias;         // [C] (beta), or empty: no shift (RMSNorm, LayerNorm(bias=False))
    float eps = 1e-5f;   // PyTorch's default; every family sets its own
};

// Each row normalised over its C features as `norm.kind` says (LayerNorm: the biased variance).
Matrix norm_forward(const Norm& norm, const ConstMatrixRef& x);

}   // namespace headscope
