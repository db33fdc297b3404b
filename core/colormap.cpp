#include "core/colormap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace headscope {

namespace {

#include "core/colormap_tables.inc"

std::uint8_t to_byte(float v) { return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); }

// Linear interpolation between the 256 entries, as matplotlib's own lookup does at
// its default N = 256 (up to rounding).
Rgba8 interpolate(const std::array<std::array<std::uint8_t, 3>, 256>& table, float t) {
    const float x = t * 255.0f;
    const auto i = static_cast<std::size_t>(std::min(x, 254.0f));
    const float f = x - static_cast<float>(i);
    std::uint8_t rgb[3];
    for (std::size_t ch = 0; ch < 3; ++ch) {
        const float v = static_cast<float>(table[i][ch]) * (1.0f - f) + static_cast<float>(table[i + 1][ch]) * f;
        rgb[ch] = static_cast<std::uint8_t>(std::lround(v));
    }
    return {rgb[0], rgb[1], rgb[2], 255};
}

} // namespace

std::string_view colormap_name(Colormap map) {
    switch (map) {
    case Colormap::viridis: return "viridis";
    case Colormap::magma: return "magma";
    case Colormap::cividis: return "cividis";
    case Colormap::greys: return "greys";
    case Colormap::coolwarm: return "coolwarm";
    }
    return "viridis";
}

std::optional<Colormap> colormap_from_name(std::string_view name) {
    for (Colormap map : {Colormap::viridis, Colormap::magma, Colormap::cividis, Colormap::greys, Colormap::coolwarm}) {
        if (colormap_name(map) == name) return map;
    }
    return std::nullopt;
}

Rgba8 colormap_lookup(Colormap map, float t) {
    if (std::isnan(t)) return not_finite_colour;
    t = std::clamp(t, 0.0f, 1.0f);
    switch (map) {
    case Colormap::viridis: return interpolate(viridis_table, t);
    case Colormap::magma: return interpolate(magma_table, t);
    case Colormap::cividis: return interpolate(cividis_table, t);
    case Colormap::coolwarm: return interpolate(coolwarm_table, t);
    case Colormap::greys: {
        // White (0) to black (1), as matplotlib's Greys: light cells are weak.
        const std::uint8_t v = to_byte(1.0f - t);
        return {v, v, v, 255};
    }
    }
    return interpolate(viridis_table, t);
}

} // namespace headscope
