#pragma once
// The llama family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& llama_family();

}   // namespace headscope
