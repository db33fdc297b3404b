#include "core/models/hf/checkpoint_load.h"

#include <filesystem>

namespace headscope {

std::string hf_field_is(const std::string& field, Eigen::Index value) { return field + " = " + std::to_string(value); }

StackShapeReasons::StackShapeReasons(const std::string& width_field, Eigen::Index width, const std::string& mlp_field,
                                     Eigen::Index mlp_width)
    : e("config.json: " + hf_field_is(width_field, width)), mlp(e + ", " + hf_field_is(mlp_field, mlp_width)) {}

std::string hf_config_path(const std::string& folder) {
    return (std::filesystem::path(folder) / "config.json").string();
}

HfCheckpointWeights::HfCheckpointWeights(const std::string& folder, const std::string& prefix,
                                         const LoadControl& control)
    : stored(HfWeights::open(folder)), mapped(stored), table(stored, prefix, folder, control) {}

}   // namespace headscope
