#include "session/request.h"

#include "core/models/model_part.h"
#include "core/models/model_registry.h"

#include <algorithm>

namespace headscope::session {

bool streams_maps(MapsPolicy policy, const ModelInfo& info, Eigen::Index T) {
    if (policy != MapsPolicy::automatic) return policy == MapsPolicy::stream;
    const double t = static_cast<double>(T);
    return static_cast<double>(info.n_layers * info.n_heads) * t * t * sizeof(float) > maps_kept_limit;
}

bool ModelChoice::operator==(const ModelChoice& o) const {
    const ToyConfig& a = config;
    const ToyConfig& b = o.config;
    return name == o.name && tower == o.tower && a.width == b.width && a.n_heads == b.n_heads &&
           a.n_layers == b.n_layers && a.mlp_ratio == b.mlp_ratio && a.max_tokens == b.max_tokens &&
           a.image_size == b.image_size && a.patch_size == b.patch_size && a.bias == b.bias && a.seed == b.seed &&
           a.init == b.init && a.arch == b.arch;
}

std::unique_ptr<Model> open_model_choice(const ModelChoice& choice, const LoadControl& control) {
    return model_tower(open_model(choice.name, choice.config, control), choice.tower, "tower");
}

}   // namespace headscope::session
