#include "session/request.h"

#include "core/base/index_lists.h"
#include "core/models/model_registry.h"

#include <algorithm>

namespace headscope::session {

std::vector<std::int64_t> token_ids_typed(const std::string& text, const std::string& what) {
    // Each item trimmed, so that an error quotes what was typed ("The cat", not "Thecat").
    std::string list;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::size_t first = text.find_first_not_of(" \t\r\n", start);
        const std::size_t last = text.find_last_not_of(" \t\r\n", comma == 0 ? 0 : comma - 1);
        if (first < comma && last != std::string::npos && last >= first) list += text.substr(first, last - first + 1);
        if (comma == text.size()) break;
        list += ',';
        start = comma + 1;
    }
    return parse_index_list(what, list, "464,3797,3332");
}

bool streams_maps(MapsPolicy policy, const ModelInfo& info, Eigen::Index T) {
    if (policy != MapsPolicy::automatic) return policy == MapsPolicy::stream;
    const double t = static_cast<double>(T);
    return static_cast<double>(info.n_layers * info.n_heads) * t * t * sizeof(float) > maps_kept_limit;
}

bool ModelChoice::operator==(const ModelChoice& o) const {
    const ToyConfig& a = config;
    const ToyConfig& b = o.config;
    return name == o.name && a.width == b.width && a.n_heads == b.n_heads && a.n_layers == b.n_layers &&
           a.mlp_ratio == b.mlp_ratio && a.max_tokens == b.max_tokens && a.image_size == b.image_size &&
           a.patch_size == b.patch_size && a.bias == b.bias && a.seed == b.seed && a.init == b.init && a.arch == b.arch;
}

std::unique_ptr<Model> open_model_choice(const ModelChoice& choice, const LoadControl& control) {
    return open_model(choice.name, choice.config, control);
}

}   // namespace headscope::session
