#pragma once
// The bert family as data over the one encoder (core/models/hf/encoder.h).

#include "core/models/hf/encoder.h"

namespace headscope {

const EncoderFamily& bert_family();

}   // namespace headscope
