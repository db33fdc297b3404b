#pragma once
// Reusing a causal model's unchanged prefix (RunOptions::prefix_from): when the first p
// tokens are those of a kept run and no position sees a later one, rows [0, p) of every
// layer's input, map and output are the kept run's, and a forward computes only rows
// [p, T): their queries against every key. These helpers check that a kept run fits and
// join its rows with the computed ones.

#include "core/nn/attention.h"
#include "core/nn/run.h"

#include <string>

namespace headscope {

// Throws headscope::Error (naming `model`, a stack of `n_layers`) unless RunOptions' prefix request can be
// served for T positions under `mask` (absent = all allowed): 0 < p < T, the kept run
// has every layer's input and map for at least p positions at the same detail, no query
// before p may see a key at or after p, and the mask's rows before p equal the kept ones.
void check_prefix_reuse(const std::string& model, Eigen::Index n_layers, const RunOptions& options,
                        const OptionalMask& mask, Eigen::Index T);

// Rows [p, T) of `mask` (absent stays absent).
OptionalMask mask_rows_from(const OptionalMask& mask, Eigen::Index p);

// `top`'s first p rows above all of `bottom`'s.
Matrix stack_rows(const Matrix& top, Eigen::Index p, const Matrix& bottom);

// One layer's trace for all T positions: rows [0, p) from `kept` (a run over the same
// first p tokens), rows [p, T) from `computed` (queries p.. against all T keys; its keys
// and values, when kept, are all T positions'). With
// TraceDetail::all_stages, `computed` holds k and v for all T keys, and the kept rows'
// scores against the new keys (before the mask) are computed here from their queries.
// `weights` are the layer's (its score scale and cap); `options` its detail and window,
// `mask` the run's [T, T] mask. `computed` is taken: what already covers all T positions
// (its keys and values, a stage's k and v) moves into the result rather than being copied
// (a window that keeps them so that typing can resume holds 6 MB of them a layer at
// GPT-2 small's T = 1,000).
AttentionTrace join_prefix(const AttentionWeights& weights, const AttentionTrace& kept, AttentionTrace computed,
                           Eigen::Index p, const OptionalMask& mask, const AttentionOptions& options);

}   // namespace headscope
