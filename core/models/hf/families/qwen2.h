#pragma once
// The qwen2 family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& qwen2_family();

// Which layers slide, as Qwen 2 and 3 configs say (use_sliding_window, sliding_window,
// max_window_layers, layer_types), into c.layers.
void read_qwen_windows(const HfFields& f, DecoderConfig& c);

}   // namespace headscope
