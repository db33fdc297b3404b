#pragma once
// The dinov2 family (model_types "dinov2" and "dinov2_with_registers") as data over the one
// encoder (core/models/hf/encoder.h).

#include "core/models/hf/encoder.h"

namespace headscope {

const EncoderFamily& dinov2_family();

}   // namespace headscope
