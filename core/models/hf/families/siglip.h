#pragma once
// The siglip family (model_type "siglip"): SiglipModel's image and text towers, each a tower
// of the one encoder (core/models/hf/encoder.h), under a head that pools the picture by
// attention and scores it against each label with a sigmoid.

#include "core/base/load_control.h"
#include "core/models/model.h"

#include <memory>
#include <string>

namespace headscope {

// Opens a SigLIP checkpoint folder: a zero-shot model (ModelInfo::zero_shot, label_score
// sigmoid) whose maps are the image tower's, with its pooling probe's (ModelTrace::probe_maps).
std::unique_ptr<Model> load_siglip(const std::string& folder, const LoadControl& control);

}   // namespace headscope
