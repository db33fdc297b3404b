#pragma once
// High-norm tokens (Darcet et al., "Vision Transformers Need Registers", 2024): trained
// vision transformers without registers repurpose a few patches of little information as
// scratch space; their outputs have several times the norm of the other patches' and they
// soak up [CLS]'s attention, the artefacts in its maps. Found here as outliers among the
// patch rows of ModelTrace::output_norms.

#include "core/tensor/matrix.h"

#include <vector>

namespace headscope {

// How far above the patches' median norm a patch must be to count as high-norm. The paper
// sees a bimodal split (DINOv2 ViT-g: ~10% of the tokens past a norm of 150, the rest well
// under); twice the median sits in its gap for every checkpoint it shows.
inline constexpr float high_norm_factor = 2.0f;

struct HighNormTokens {
    float median = 0.0f;       // the patches' median norm
    std::vector<int> tokens;   // the rows (token indices, ascending) past factor x median
};

// Among rows first_patch.. of `norms` [T] (the patches; the prefix tokens before them are
// not judged), those with a norm above `factor` times those rows' median. Empty when there
// are no norms or no patches; throws when first_patch is past the rows.
HighNormTokens high_norm_tokens(const Vector& norms, int first_patch, float factor = high_norm_factor);

}   // namespace headscope
