#pragma once
// The most probable outputs of a model head: one row of logits (a language model's
// position, or a classifier's only row) through a softmax, and its k largest entries.
// Used by the window's predictions panel; no GL or ImGui here.

#include "core/tensor/matrix.h"

#include <span>
#include <vector>

namespace headscope {

struct Prediction {
    Eigen::Index index = 0;   // the logit column (a token id, a class id)
    float logit = 0.0f;
    float probability = 0.0f;   // softmax over the whole row
};

// Row `row` of a row-major [R, V] matrix, as a span of V floats.
std::span<const float> logits_row(const Matrix& logits, Eigen::Index row);

// The `k` largest logits of `row`, most probable first, each with its softmax
// probability over the whole row. Equal logits keep column order (lower index first).
// Fewer than k entries when the row is shorter. Empty when the row has no softmax: it
// is empty, holds NaN or +inf, or every entry is -inf (-inf alone is probability 0).
std::vector<Prediction> top_predictions(std::span<const float> row, int k);

// softmax(row)[index] for each of `indices`, computed as top_predictions does; NaN
// where the row has no softmax or an index is outside it.
std::vector<float> probabilities_at(std::span<const float> row, std::span<const Eigen::Index> indices);

}   // namespace headscope
