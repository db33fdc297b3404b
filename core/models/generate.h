#pragma once
// Greedy decoding for the models whose decoder reads a source (ModelInfo::encoder_decoder).

#include "core/base/load_control.h"
#include "core/models/model.h"

namespace headscope {

// The most tokens a request may ask generate_greedy for (--generate, the window's Generate).
inline constexpr int max_generated_tokens = 512;

// `input`'s source with the decoder's start token, then up to `steps` tokens, each the most
// likely next one (the first of equals), stopping after the end token (ModelInfo::end_id)
// or at the decoder's longest input (ModelInfo::max_tokens): plain argmax of the model with
// every head on, none of a generation config's forced or banned tokens. Each step runs the
// model whole. Throws for a model without a decoder reading a source, or logits that are not
// finite; `control` may stop it between steps (LoadCancelled).
ModelInput generate_greedy(const Model& model, const ModelInput& input, Eigen::Index steps,
                           const LoadControl& control = {});

}   // namespace headscope
