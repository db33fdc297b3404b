#pragma once
// The gpt2 family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& gpt2_family();

}   // namespace headscope
