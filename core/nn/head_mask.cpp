#include "core/nn/head_mask.h"

#include "core/base/error.h"

#include <algorithm>
#include <string>

namespace headscope {

HeadMask::HeadMask(Eigen::Index layers, Eigen::Index heads)
    : layers_(std::max<Eigen::Index>(0, layers)), heads_(std::max<Eigen::Index>(0, heads)),
      off_(static_cast<std::size_t>(layers_ * heads_), false) {}

HeadMask::HeadMask(const std::vector<std::vector<bool>>& flags)
    : HeadMask(static_cast<Eigen::Index>(flags.size()),
               flags.empty() ? 0 : static_cast<Eigen::Index>(flags[0].size())) {
    for (Eigen::Index l = 0; l < layers_; ++l) {
        const std::vector<bool>& layer = flags[static_cast<std::size_t>(l)];
        if (static_cast<Eigen::Index>(layer.size()) != heads_) {
            throw Error("disabled heads: layer " + std::to_string(l) + " has " + std::to_string(layer.size()) +
                        " flags, layer 0 has " + std::to_string(heads_));
        }
        for (Eigen::Index h = 0; h < heads_; ++h) set(l, h, layer[static_cast<std::size_t>(h)]);
    }
}

bool HeadMask::off(Eigen::Index layer, Eigen::Index head) const {
    if (layer < 0 || layer >= layers_ || head < 0 || head >= heads_) return false;
    return off_[static_cast<std::size_t>(layer * heads_ + head)];
}

void HeadMask::set(Eigen::Index layer, Eigen::Index head, bool off) {
    if (layer < 0 || layer >= layers_ || head < 0 || head >= heads_) {
        throw Error("head " + std::to_string(layer) + "." + std::to_string(head) + ": the heads are 0.." +
                    std::to_string(layers_ - 1) + " x 0.." + std::to_string(heads_ - 1));
    }
    off_[static_cast<std::size_t>(layer * heads_ + head)] = off;
}

void HeadMask::enable_all() { std::fill(off_.begin(), off_.end(), false); }

void HeadMask::resize(Eigen::Index layers, Eigen::Index heads) {
    if (layers == layers_ && heads == heads_) return;
    HeadMask resized(layers, heads);
    for (Eigen::Index l = 0; l < std::min(layers_, resized.layers_); ++l) {
        for (Eigen::Index h = 0; h < std::min(heads_, resized.heads_); ++h) resized.set(l, h, off(l, h));
    }
    *this = std::move(resized);
}

bool HeadMask::any() const { return std::find(off_.begin(), off_.end(), true) != off_.end(); }

Eigen::Index HeadMask::count() const { return std::count(off_.begin(), off_.end(), true); }

Eigen::Index HeadMask::first_layer() const {
    const auto first = std::find(off_.begin(), off_.end(), true);
    return first == off_.end() ? layers_ : static_cast<Eigen::Index>(first - off_.begin()) / heads_;
}

std::vector<bool> HeadMask::layer_flags(Eigen::Index layer) const {
    if (layer < 0 || layer >= layers_) return {};
    const auto first = off_.begin() + static_cast<std::ptrdiff_t>(layer * heads_);
    return {first, first + static_cast<std::ptrdiff_t>(heads_)};
}

void HeadMask::check_fits(Eigen::Index n_layers, Eigen::Index n_heads) const {
    if (layers_ == 0 && heads_ == 0) return;
    if (layers_ != n_layers || heads_ != n_heads) {
        throw Error("disabled heads: flags for " + std::to_string(layers_) + " x " + std::to_string(heads_) +
                    " heads, the model has " + std::to_string(n_layers) + " x " + std::to_string(n_heads));
    }
}

Eigen::Index first_difference(const HeadMask& a, const HeadMask& b, Eigen::Index n_layers) {
    const Eigen::Index heads = std::max(a.heads(), b.heads());
    for (Eigen::Index l = 0; l < n_layers; ++l) {
        for (Eigen::Index h = 0; h < heads; ++h) {
            if (a.off(l, h) != b.off(l, h)) return l;
        }
    }
    return n_layers;
}

}   // namespace headscope
