#pragma once
// Colour maps shared by the GUI's textures and the CLI's PNGs, so both show the same
// colours for the same weights.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace headscope {

struct Rgba8 {
    std::uint8_t r = 0, g = 0, b = 0, a = 255;
    bool operator==(const Rgba8&) const = default;
};

// viridis (default), magma and cividis are perceptual and colour-blind-safe; greys
// prints well; coolwarm is diverging (0.5 = no difference), for differences of maps.
enum class Colormap { viridis, magma, cividis, greys, coolwarm };

std::string_view colormap_name(Colormap map);
std::optional<Colormap> colormap_from_name(std::string_view name);

// t in [0, 1] (clamped; NaN maps to the colour for "not a number" below).
Rgba8 colormap_lookup(Colormap map, float t);
// colormap_lookup of each value, written as 4 bytes (r, g, b, a) per value to `rgba`:
// the same colours, with the map chosen once instead of per cell (a 1024 x 1024
// heatmap's texture is 1.4 M lookups).
void colormap_lookup_many(Colormap map, std::span<const float> values, std::uint8_t* rgba);
// As colormap_lookup_many, but +infinity is drawn in not_finite_colour and -infinity in
// masked_colour: a heatmap's cells marked as such before they are coloured (the window's
// texture levels), coloured in the same pass as the rest.
void colormap_lookup_marked(Colormap map, std::span<const float> values, std::uint8_t* rgba);

// Drawn where a mask forbids the pair: a neutral grey no colour map produces at any
// level, so "masked" never reads as "weight 0".
inline constexpr Rgba8 masked_colour{150, 150, 150, 255};
// Drawn for values that are not finite (NaN/Inf in the weights): loud magenta.
inline constexpr Rgba8 not_finite_colour{255, 0, 255, 255};

}   // namespace headscope
