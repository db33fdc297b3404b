#pragma once
// How a zero-shot model's logits become probabilities (ModelInfo::label_score).

namespace headscope {

enum class LabelScore {
    softmax,   // one distribution over the labels (CLIP; every other model's logits too)
    sigmoid,   // each label on its own, a yes-or-no (SigLIP)
};

}   // namespace headscope
