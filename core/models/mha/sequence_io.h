#pragma once
// Reading batches of sequences and keep-masks from .safetensors tensors, with the
// shape rules of docs/cli.md: [B, T, C] or [T, C] (B = 1), no empty dimension,
// floating dtypes for activations; masks [Tq, Tk] (shared) or [B, Tq, Tk] in any
// dtype, nonzero = allowed.

#include "core/nn/mask.h"
#include "core/tensor/matrix.h"
#include "core/tensor/safetensors.h"

#include <string>
#include <vector>

namespace headscope {

struct SequenceBatch {
    Eigen::Index n_batch = 0;    // B
    bool shared = false;         // read from [T, C]: one sequence for every batch element
    std::vector<Matrix> items;   // [B] of [T, C]
};

// `symbolic` spells the expected shape for messages, e.g. "[B, Tq, E]".
SequenceBatch read_sequence_batch(const SafetensorsFile& file, const std::string& name, const char* symbolic);

// Tensor 'keep': one mask per batch element (the same one when the tensor is [Tq, Tk]).
// An element is allowed when its stored value is nonzero (NaN included, as in PyTorch).
std::vector<Mask> read_keep_masks(const SafetensorsFile& file, Eigen::Index n_batch, Eigen::Index n_queries,
                                  Eigen::Index n_keys);

}   // namespace headscope
