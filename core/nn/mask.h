#pragma once
// Attention masks as [Tq, Tk] boolean matrices: true = "query i may attend key j".
// Masks compose by AND; an absent mask (std::nullopt) allows every pair.

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <span>

namespace headscope {

using Mask = Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using OptionalMask = std::optional<Mask>;

// Key j allowed for query i iff j <= i, as torch.tril(torch.ones(Tq, Tk)).
Mask mask_causal(Eigen::Index n_queries, Eigen::Index n_keys);
// A sliding window of W: query t sees keys t - W + 1 .. t (Mistral's and Gemma's local
// layers, as transformers' sliding_window masks), [T, T].
Mask mask_sliding_window(Eigen::Index T, Eigen::Index window);
// Every query may attend exactly the keys marked valid ([Tk] flags, e.g. not padding).
Mask mask_padding(Eigen::Index n_queries, std::span<const bool> key_is_valid);

// AND of two optional masks of the same shape; absent operands allow everything.
OptionalMask mask_and(const OptionalMask& a, const OptionalMask& b);

// Whether `a` and `b` allow the same pairs in their first `rows` x `cols` (both at least
// that big), read a row at a time: Eigen's all() and any() read a block a column at a
// time, across rows, which at T = 1,000 made one comparison of two masks 8 ms.
bool masks_agree(const Mask& a, const Mask& b, Eigen::Index rows, Eigen::Index cols);
// Whether `mask` allows any pair in its block [first_row, +rows) x [first_col, +cols), read
// a row at a time.
bool mask_allows_any(const Mask& mask, Eigen::Index first_row, Eigen::Index rows, Eigen::Index first_col,
                     Eigen::Index cols);

}   // namespace headscope
