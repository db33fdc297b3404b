#pragma once
// Which heads are switched off: [L][H] flags, layer-major. A default HeadMask has no size
// and no head off, so it fits any model; one sized to a model keeps its flags when resized
// to another (what fits). Runs (RunOptions::disabled_heads), requests, the window's state
// and the analyses all pass heads as this one type.

#include <Eigen/Core>

#include <initializer_list>
#include <vector>

namespace headscope {

class HeadMask {
public:
    HeadMask() = default;
    HeadMask(Eigen::Index layers, Eigen::Index heads);   // sized, every head on
    // From [L][H] flags written out (true = off), as a literal or a JSON array; every
    // layer's the same length, else headscope::Error.
    HeadMask(const std::vector<std::vector<bool>>& flags);     // NOLINT(google-explicit-constructor)
    HeadMask(std::initializer_list<std::vector<bool>> flags)   // NOLINT(google-explicit-constructor)
        : HeadMask(std::vector<std::vector<bool>>(flags)) {}

    Eigen::Index layers() const { return layers_; }
    Eigen::Index heads() const { return heads_; }
    // Whether head (layer, head) is off; false outside the size.
    bool off(Eigen::Index layer, Eigen::Index head) const;
    // Switches head (layer, head) off (or on); throws headscope::Error outside the size.
    void set(Eigen::Index layer, Eigen::Index head, bool off = true);
    void toggle(Eigen::Index layer, Eigen::Index head) { set(layer, head, !off(layer, head)); }
    // Every head on again, the size kept.
    void enable_all();
    // Sized to [layers][heads]; flags inside both sizes kept, the rest on.
    void resize(Eigen::Index layers, Eigen::Index heads);

    bool any() const;                   // some head off
    Eigen::Index count() const;         // heads off
    Eigen::Index first_layer() const;   // the first layer with a head off; layers() when none
    // Layer `layer`'s flags [H] (empty when the mask has no size or no such layer).
    std::vector<bool> layer_flags(Eigen::Index layer) const;
    // Throws headscope::Error unless the mask is unsized or sized [n_layers][n_heads].
    void check_fits(Eigen::Index n_layers, Eigen::Index n_heads) const;

    // The same size and the same heads off. A mask sized to another model is another
    // request (the session applies a mask only to a model of its size); first_difference()
    // compares the heads alone.
    bool operator==(const HeadMask& other) const = default;

private:
    Eigen::Index layers_ = 0;
    Eigen::Index heads_ = 0;
    std::vector<bool> off_;   // [layers_ * heads_]
};

// The first layer at which `a` and `b` switch some head differently; n_layers when none.
Eigen::Index first_difference(const HeadMask& a, const HeadMask& b, Eigen::Index n_layers);

}   // namespace headscope
