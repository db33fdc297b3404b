#pragma once
// The clip family (model_type "clip"): CLIPModel's image and text towers, each a tower of the
// one encoder (core/models/hf/encoder.h), under a head that scores a picture against labels.

#include "core/base/load_control.h"
#include "core/models/model.h"

#include <memory>
#include <string>

namespace headscope {

// Opens a CLIP checkpoint folder: a zero-shot model (ModelInfo::zero_shot) whose maps are the
// image tower's and whose labels run through the text tower.
std::unique_ptr<Model> load_clip(const std::string& folder, const LoadControl& control);

}   // namespace headscope
