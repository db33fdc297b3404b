#pragma once
// Opening a model by the name a user gives (--model PATH): built-in demo models as
// "builtin:NAME", with their size and seed from ToyConfig.

#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/models/toy/toy_models.h"

#include <memory>
#include <string>
#include <vector>

namespace headscope {

struct BuiltinModel {
    std::string name;          // "builtin:toy-text"
    std::string description;   // one line, for `headscope-cli models`
};

std::vector<BuiltinModel> builtin_models();

// The built (not trained) demo models, builtin:toy-*: ToyConfig (size, seed, structured
// or random heads) shapes them. The trained ones (builtin:tiny-*) are checkpoints read
// from assets/models/, whose config.json fixes everything.
bool is_toy_model(const std::string& name);

// Throws headscope::Error for an unknown built-in name (listing the known ones), for
// a config that cannot form the model, and for paths that are not built-in models.
// Checkpoint folders report their progress to `control` and stop (LoadCancelled) when it says so.
std::unique_ptr<Model> open_model(const std::string& path, const ToyConfig& config, const LoadControl& control = {});

}   // namespace headscope
