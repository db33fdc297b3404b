#pragma once
// The most probable outputs of a model head: one row of logits (a language model's
// position, or a classifier's only row) through a softmax (or, for SigLIP's labels, each
// through a sigmoid), and its k largest entries.
// Used by the window's predictions panel; no GL or ImGui here.

#include "core/models/label_score.h"
#include "core/tensor/matrix.h"

#include <span>
#include <vector>

namespace headscope {

struct Prediction {
    Eigen::Index index = 0;   // the logit column (a token id, a class id)
    float logit = 0.0f;
    float probability = 0.0f;   // softmax over the whole row, or the logit's sigmoid
};

// Row `row` of a row-major [R, V] matrix, as a span of V floats.
std::span<const float> logits_row(const Matrix& logits, Eigen::Index row);

// The `k` largest logits of `row`, most probable first, each with its softmax
// probability over the whole row (`score` sigmoid: each logit's sigmoid). Equal logits
// keep column order (lower index first). Fewer than k entries when the row is shorter.
// Empty when the row has no probabilities: it is empty or holds NaN; for a softmax also
// when it holds +inf or every entry is -inf (-inf alone is probability 0).
std::vector<Prediction> top_predictions(std::span<const float> row, int k, LabelScore score = LabelScore::softmax);

// The probability of each of `indices`, computed as top_predictions does; NaN where the
// row has none or an index is outside it.
std::vector<float> probabilities_at(std::span<const float> row, std::span<const Eigen::Index> indices,
                                    LabelScore score = LabelScore::softmax);

}   // namespace headscope
