#pragma once
// The gpt_neox family as data over the one decoder (core/models/hf/decoder.h).

#include "core/models/hf/decoder.h"

namespace headscope {

const DecoderFamily& gpt_neox_family();

}   // namespace headscope
