#include "core/analysis/high_norm_tokens.h"

#include "core/base/error.h"

#include <algorithm>
#include <string>

namespace headscope {

HighNormTokens high_norm_tokens(const Vector& norms, int first_patch, float factor) {
    HighNormTokens found;
    if (norms.size() == 0) return found;
    if (first_patch < 0 || first_patch > norms.size()) {
        throw Error("high-norm tokens: patches from row " + std::to_string(first_patch) + " of " +
                    std::to_string(norms.size()));
    }
    std::vector<float> patches(norms.data() + first_patch, norms.data() + norms.size());
    if (patches.empty()) return found;
    // The median: the middle value, or the mean of the two middle ones.
    const auto middle = patches.begin() + static_cast<std::ptrdiff_t>(patches.size() / 2);
    std::nth_element(patches.begin(), middle, patches.end());
    found.median = *middle;
    if (patches.size() % 2 == 0) found.median = 0.5f * (found.median + *std::max_element(patches.begin(), middle));
    for (Eigen::Index t = first_patch; t < norms.size(); ++t) {
        if (norms(t) > factor * found.median) found.tokens.push_back(static_cast<int>(t));
    }
    return found;
}

}   // namespace headscope
