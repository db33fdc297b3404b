#pragma once
// The gemma family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& gemma_family();

// What every Gemma generation shares, into c: the activation (hidden_activation, else
// hidden_act), attention_bias, RMSNorm by (1 + w), embeddings scaled by sqrt(hidden_size).
void read_gemma_basics(const HfFields& f, DecoderConfig& c);

}   // namespace headscope
