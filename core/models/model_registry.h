#pragma once
// Opening a model by the name a user gives (--model PATH): built-in demo models as
// "builtin:NAME", with their size and seed from ToyConfig, and Hugging Face checkpoint
// folders by their config.json's model_type, through one table of families.

#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/models/toy/toy_models.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace headscope {

struct BuiltinModel {
    std::string name;          // "builtin:toy-text"
    std::string description;   // one line, for `headscope-cli models`
};

std::vector<BuiltinModel> builtin_models();

// A Hugging Face checkpoint family this build opens: one row of the registry's table.
// Adding a family is its file pair under core/models/hf/ plus one row.
struct HfFamily {
    std::vector<std::string_view> model_types;   // config.json model_type values it opens
    std::unique_ptr<Model> (*load)(const std::string& folder, const LoadControl& control);
    std::string_view description;   // one line, for `headscope-cli models`
};

// The table, in the order messages list the families.
const std::vector<HfFamily>& hf_families();

// Every row's model_types, in table order ("vit", "deit", "gpt2", "bert").
std::vector<std::string> hf_supported_model_types();

// The built (not trained) demo models, builtin:toy-*: ToyConfig (size, seed, structured
// or random heads) shapes them. The trained ones (builtin:tiny-*) are checkpoints read
// from assets/models/, whose config.json fixes everything.
bool is_toy_model(const std::string& name);

// Throws headscope::Error for an unknown built-in name (listing the known ones), for
// a config that cannot form the model, and for paths that are not built-in models.
// Checkpoint folders report their progress to `control` and stop (LoadCancelled) when it says so.
std::unique_ptr<Model> open_model(const std::string& path, const ToyConfig& config, const LoadControl& control = {});

}   // namespace headscope
