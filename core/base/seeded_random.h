#pragma once
// Counter-based random numbers for the demo models: value i of stream s under seed k
// is a pure function of (k, s, i), so a weight or an embedding never depends on the
// order things were generated in, and a reference (tools/demo_reference.py) can
// recompute any of them in a few lines: SplitMix64 hashing + Box-Muller in double.

#include <cmath>
#include <cstdint>

namespace headscope {

inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Uniform in (0, 1], 53 bits.
inline double seeded_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(stream ^ splitmix64(index)));
    return static_cast<double>((h >> 11) + 1) * 0x1.0p-53;
}

// Standard normal (Box-Muller on two uniforms of the same stream).
inline float seeded_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    constexpr double two_pi = 6.283185307179586476925286766559;
    const double u1 = seeded_uniform(seed, stream, 2 * index);
    const double u2 = seeded_uniform(seed, stream, 2 * index + 1);
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2));
}

}   // namespace headscope
