#pragma once
// The mistral family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& mistral_family();

}   // namespace headscope
