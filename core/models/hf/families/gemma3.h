#pragma once
// The gemma3 family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& gemma3_family();

}   // namespace headscope
