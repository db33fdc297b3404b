#pragma once
// The vit family (model_types "vit" and "deit") as data over the one encoder
// (core/models/hf/encoder.h).

#include "core/models/hf/encoder.h"

namespace headscope {

const EncoderFamily& vit_family();

}   // namespace headscope
