#include "core/render/colormap.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace headscope {

namespace {

#include "core/render/colormap_tables.inc"

// std::lround for v in [0, 255], without its library call: in double, v + 0.5 is exact,
// so truncating it rounds halves away from zero exactly as lround does.
std::uint32_t round_to_byte(float v) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<double>(v) + 0.5));
}

// r, g, b, a in memory order, as one 32-bit store.
constexpr std::uint32_t packed(std::uint32_t r, std::uint32_t g, std::uint32_t b, std::uint32_t a) {
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
    // Where the machine fuses multiply-adds, one written out: a compiler may otherwise fuse
    // either product, and the 8-cell path below must give the same bytes. Elsewhere there is
    // nothing to fuse, and std::fma would be a library call per channel.
    const auto channel = [&](const std::array<float, 256>& c) {
#if defined(__FMA__)
        return round_to_byte(std::fma(c[i], 1.0f - f, c[i + 1] * f));
#else
        return round_to_byte(c[i] * (1.0f - f) + c[i + 1] * f);
#endif
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

// The map chosen once per heatmap, then no call per cell. colormap_lookup and the many-cell
// lookups agree to the bit: both use table_colour and grey_colour, or (8 cells at a time,
// below) the same arithmetic.
template <typename Colour>
void colour_each(std::span<const float> values, std::uint8_t* rgba, Colour colour) {
    for (std::size_t k = 0; k < values.size(); ++k) {
        const std::uint32_t pixel = colour(values[k]);
        std::memcpy(rgba + 4 * k, &pixel, sizeof pixel);
    }
}

constexpr float infinity = std::numeric_limits<float>::infinity();

// `colour`, or where `marked` (colormap_lookup_marked) with the infinities drawn as marks.
template <bool marked, typename Colour>
auto marking(Colour colour) {
    return [colour](float t) {
        if constexpr (marked) {
            if (t == infinity) return packed(not_finite_colour);
            if (t == -infinity) return packed(masked_colour);
        }
        return colour(t);
    };
}

#if defined(__AVX2__) && defined(__FMA__)
// table_colour for 8 cells: the same arithmetic, in the same order, and the same rounding
// (in double, halves away from zero), so each byte is table_colour's. Each cell's two
// table entries are gathered as packed pixels (two gathers, not one per channel and
// entry: gathers are most of the time here).
__m256i table_channel(__m256i low_pixels, __m256i high_pixels, int shift, __m256 low_share, __m256 high_share) {
    const __m256i byte = _mm256_set1_epi32(0xff);
    const __m256 low = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(low_pixels, shift), byte));
    const __m256 high = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(high_pixels, shift), byte));
    const __m256 v = _mm256_fmadd_ps(low, low_share, _mm256_mul_ps(high, high_share));
    const __m256d half = _mm256_set1_pd(0.5);
    const __m128i first = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), half));
    const __m128i second = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), half));
    return _mm256_slli_epi32(_mm256_set_m128i(second, first), shift);
}

// A table's entries as packed pixels, for the gathers above: made once, at compile time
// (the levels of a heatmap look a row up at a time).
using PackedEntries = std::array<std::uint32_t, 256>;

constexpr PackedEntries packed_entries(const Channels& table) {
    PackedEntries pixels{};
    for (std::size_t i = 0; i < 256; ++i) {
        const auto byte = [](float v) { return static_cast<std::uint32_t>(v); };
        pixels[i] = packed(byte(table.r[i]), byte(table.g[i]), byte(table.b[i]), 255);
    }
    return pixels;
}

constexpr PackedEntries viridis_entries = packed_entries(viridis_channels);
constexpr PackedEntries magma_entries = packed_entries(magma_channels);
constexpr PackedEntries cividis_entries = packed_entries(cividis_channels);
constexpr PackedEntries coolwarm_entries = packed_entries(coolwarm_channels);

const PackedEntries& entries_of(const Channels& table) {
    if (&table == &magma_channels) return magma_entries;
    if (&table == &cividis_channels) return cividis_entries;
    if (&table == &coolwarm_channels) return coolwarm_entries;
    return viridis_entries;
}

// table_colour of each value, 8 at a time (the rest one by one): a heatmap's texture
// levels are mostly this lookup, and one cell at a time it left the vector units idle.
template <bool marked>
void table_colour_each(const Channels& table, std::span<const float> values, std::uint8_t* rgba) {
    const PackedEntries& entries = entries_of(table);
    const auto* entry_base = reinterpret_cast<const int*>(entries.data());
    const __m256 zero = _mm256_setzero_ps();
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256i not_finite = _mm256_set1_epi32(static_cast<int>(packed(not_finite_colour)));
    const __m256i masked = _mm256_set1_epi32(static_cast<int>(packed(masked_colour)));
    const __m256i opaque = _mm256_set1_epi32(static_cast<int>(packed(0, 0, 0, 255)));
    std::size_t k = 0;
    for (; k + 8 <= values.size(); k += 8) {
        const __m256 raw = _mm256_loadu_ps(values.data() + k);
        const __m256 nan = _mm256_cmp_ps(raw, raw, _CMP_UNORD_Q);
        // NaN to 0, then clamped to [0, 1].
        const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_andnot_ps(nan, raw), zero), one);
        const __m256 x = _mm256_mul_ps(t, _mm256_set1_ps(255.0f));
        const __m256i index = _mm256_cvttps_epi32(_mm256_min_ps(x, _mm256_set1_ps(254.0f)));
        const __m256 high_share = _mm256_sub_ps(x, _mm256_cvtepi32_ps(index));
        const __m256 low_share = _mm256_sub_ps(one, high_share);
        const __m256i low_pixels = _mm256_i32gather_epi32(entry_base, index, 4);
        const __m256i high_pixels = _mm256_i32gather_epi32(entry_base + 1, index, 4);
        __m256i pixel = _mm256_or_si256(table_channel(low_pixels, high_pixels, 0, low_share, high_share),
                                        table_channel(low_pixels, high_pixels, 8, low_share, high_share));
        pixel = _mm256_or_si256(pixel, table_channel(low_pixels, high_pixels, 16, low_share, high_share));
        __m256 loud = nan;
        if constexpr (marked) {
            loud = _mm256_or_ps(loud, _mm256_cmp_ps(raw, _mm256_set1_ps(infinity), _CMP_EQ_OQ));
            const __m256 quiet = _mm256_cmp_ps(raw, _mm256_set1_ps(-infinity), _CMP_EQ_OQ);
            pixel = _mm256_blendv_epi8(pixel, masked, _mm256_castps_si256(quiet));
        }
        pixel = _mm256_blendv_epi8(_mm256_or_si256(pixel, opaque), not_finite, _mm256_castps_si256(loud));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(rgba + 4 * k), pixel);
    }
    colour_each(values.subspan(k), rgba + 4 * k, marking<marked>([&table](float t) { return table_colour(table, t); }));
}
#else
template <bool marked>
void table_colour_each(const Channels& table, std::span<const float> values, std::uint8_t* rgba) {
    colour_each(values, rgba, marking<marked>([&table](float t) { return table_colour(table, t); }));
}
#endif

template <bool marked>
void lookup_each(Colormap map, std::span<const float> values, std::uint8_t* rgba) {
    if (const Channels* table = channels_of(map)) {
        table_colour_each<marked>(*table, values, rgba);
    } else {
        colour_each(values, rgba, marking<marked>(grey_colour));
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
    lookup_each<false>(map, values, rgba);
}

void colormap_lookup_marked(Colormap map, std::span<const float> values, std::uint8_t* rgba) {
    lookup_each<true>(map, values, rgba);
}

}   // namespace headscope
