#pragma once
// The phi3 family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& phi3_family();

}   // namespace headscope
