#include "core/nn/position.h"

#include "core/base/error.h"
#include "core/tensor/parallel.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace headscope {

std::string RopeScaling::type_name() const {
    switch (type) {
    case Type::none: return "default";
    case Type::linear: return "linear";
    case Type::dynamic: return "dynamic";
    case Type::yarn: return "yarn";
    case Type::longrope: return "longrope";
    case Type::llama3: return "llama3";
    }
    return "none";
}

namespace {

using Type = RopeScaling::Type;

// theta^(-2i / r) for i < r / 2: transformers' default inv_freq.
std::vector<double> default_frequencies(double theta, Eigen::Index r) {
    std::vector<double> inverse(static_cast<std::size_t>(r / 2));
    for (Eigen::Index i = 0; i < r / 2; ++i) {
        inverse[static_cast<std::size_t>(i)] =
            1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(r));
    }
    return inverse;
}

// Llama 3.1's: long wavelengths slowed by `factor`, short ones kept, a smooth blend between.
void llama3_frequencies(const RopeScaling& s, std::vector<double>& inverse) {
    const auto context = static_cast<double>(s.original_max_positions);
    const double low_wavelength = context / s.low_freq_factor;
    const double high_wavelength = context / s.high_freq_factor;
    for (double& f : inverse) {
        const double wavelength = 2.0 * std::numbers::pi / f;
        if (wavelength > low_wavelength) {
            f /= s.factor;
        } else if (!(wavelength < high_wavelength)) {
            const double smooth = (context / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
            f = (1.0 - smooth) * f / s.factor + smooth * f;
        }
    }
}

double yarn_mscale(double scale, double mscale) { return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// YaRN: each pair blends interpolation (slowed by `factor`) and extrapolation by a ramp
// over the dimensions between beta_fast and beta_slow rotations in the original context.
float yarn_frequencies(const RopeScaling& s, double theta, Eigen::Index r, std::vector<double>& inverse) {
    const double original =
        static_cast<double>(s.original_max_positions > 0 ? s.original_max_positions : s.max_positions);
    const double factor = s.original_max_positions > 0 && s.max_positions > 0
                              ? static_cast<double>(s.max_positions) / static_cast<double>(s.original_max_positions)
                              : s.factor;
    double attention = s.attention_factor;
    if (attention < 0) {
        attention = s.mscale != 0 && s.mscale_all_dim != 0
                        ? yarn_mscale(factor, s.mscale) / yarn_mscale(factor, s.mscale_all_dim)
                        : yarn_mscale(factor, 1.0);
    }
    const auto dim = static_cast<double>(r);
    const auto correction = [&](double rotations) {
        return dim * std::log(original / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(theta));
    };
    double low = correction(s.beta_fast);
    double high = correction(s.beta_slow);
    if (s.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, dim - 1.0);
    if (low == high) high += 0.001;
    for (std::size_t i = 0; i < inverse.size(); ++i) {
        const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
        const double extrapolation = 1.0 - ramp;
        inverse[i] = inverse[i] / factor * (1.0 - extrapolation) + inverse[i] * extrapolation;
    }
    return static_cast<float>(attention);
}

// LongRoPE (Phi-3): each pair's frequency divided by its short or long factor, by length.
float longrope_frequencies(const RopeScaling& s, Eigen::Index sequence_length, std::vector<double>& inverse) {
    const bool long_sequence = sequence_length > s.original_max_positions;
    const std::vector<double>& factors = long_sequence ? s.long_factor : s.short_factor;
    if (factors.size() != inverse.size()) {
        throw Error("rope_scaling: " + std::string(long_sequence ? "long_factor" : "short_factor") + " has " +
                    std::to_string(factors.size()) + " values, expected " + std::to_string(inverse.size()) +
                    " (half the rotated head width)");
    }
    for (std::size_t i = 0; i < inverse.size(); ++i) inverse[i] /= factors[i];
    if (s.attention_factor >= 0) return static_cast<float>(s.attention_factor);
    if (s.factor <= 1.0) return 1.0f;
    return static_cast<float>(
        std::sqrt(1.0 + std::log(s.factor) / std::log(static_cast<double>(s.original_max_positions))));
}

}   // namespace

RotaryFrequencies rotary_frequencies(const Rotary& rotary, Eigen::Index r, Eigen::Index sequence_length) {
    const RopeScaling& s = rotary.scaling;
    double theta = rotary.theta;
    // Dynamic NTK: past the trained length, a larger base for the whole sequence.
    if (s.type == Type::dynamic && sequence_length > s.max_positions && r > 2) {
        const double ratio = s.factor * static_cast<double>(sequence_length) / static_cast<double>(s.max_positions);
        theta *= std::pow(ratio - (s.factor - 1.0), static_cast<double>(r) / static_cast<double>(r - 2));
    }
    std::vector<double> inverse = default_frequencies(theta, r);
    float attention_factor = 1.0f;
    switch (s.type) {
    case Type::none:
    case Type::dynamic: break;
    case Type::linear:
        for (double& f : inverse) f /= s.factor;
        break;
    case Type::llama3: llama3_frequencies(s, inverse); break;
    case Type::yarn: attention_factor = yarn_frequencies(s, rotary.theta, r, inverse); break;
    case Type::longrope: attention_factor = longrope_frequencies(s, sequence_length, inverse); break;
    }
    RotaryFrequencies out;
    out.attention_factor = attention_factor;
    out.inverse.reserve(inverse.size());
    for (const double f : inverse) out.inverse.push_back(static_cast<float>(f));
    return out;
}

void apply_rotary(const Rotary& rotary, MatrixRef x, Eigen::Index n_heads, Eigen::Index first_position,
                  Eigen::Index sequence_length) {
    if (!rotary.active() || x.size() == 0) return;
    const Eigen::Index Dh = n_heads > 0 ? x.cols() / n_heads : 0;
    const Eigen::Index r = rotary.rotary_width > 0 ? rotary.rotary_width : Dh;
    if (n_heads < 1 || x.cols() != n_heads * Dh || r % 2 != 0 || r > Dh) {
        throw Error("rotary positions: " + std::to_string(r) + " rotated features of heads " + std::to_string(Dh) +
                    " wide (expected an even number, at most the head width)");
    }
    if (sequence_length <= 0) sequence_length = first_position + x.rows();
    const Eigen::Index half = r / 2;
    // transformers computes the angles position * inv_freq in float32, and cos and sin of
    // them times the attention factor.
    const RotaryFrequencies frequencies = rotary_frequencies(rotary, r, sequence_length);
    const bool interleaved = rotary.layout == RotaryLayout::interleaved;
    parallel_ranges(x.rows(), 10.0 * static_cast<double>(x.size()), [&](Eigen::Index first, Eigen::Index last) {
        std::vector<float> cosines(static_cast<std::size_t>(half));
        std::vector<float> sines(static_cast<std::size_t>(half));
        for (Eigen::Index t = first; t < last; ++t) {
            const auto position = static_cast<float>(first_position + t);
            for (Eigen::Index i = 0; i < half; ++i) {
                const float angle = position * frequencies.inverse[static_cast<std::size_t>(i)];
                cosines[static_cast<std::size_t>(i)] = std::cos(angle) * frequencies.attention_factor;
                sines[static_cast<std::size_t>(i)] = std::sin(angle) * frequencies.attention_factor;
            }
            float* row = x.row(t).data();
            for (Eigen::Index h = 0; h < n_heads; ++h) {
                float* head = row + h * Dh;
                for (Eigen::Index i = 0; i < half; ++i) {
                    // rotate_half pairs feature i with i + r/2; GPT-J's layout pairs 2i with 2i + 1.
                    float& a = interleaved ? head[2 * i] : head[i];
                    float& b = interleaved ? head[2 * i + 1] : head[i + half];
                    const float c = cosines[static_cast<std::size_t>(i)];
                    const float s = sines[static_cast<std::size_t>(i)];
                    const float first_value = a;
                    a = first_value * c - b * s;   // x * cos + rotate(x) * sin, first of the pair
                    b = b * c + first_value * s;   // second of the pair
                }
            }
        }
    });
}

Eigen::Index relative_position_bucket(Eigen::Index offset, bool bidirectional, Eigen::Index buckets,
                                      Eigen::Index max_distance) {
    Eigen::Index bucket = 0;
    Eigen::Index distance = 0;
    if (bidirectional) {
        buckets /= 2;
        if (offset > 0) bucket += buckets;
        distance = offset < 0 ? -offset : offset;
    } else {
        distance = offset < 0 ? -offset : 0;
    }
    const Eigen::Index max_exact = buckets / 2;
    if (distance < max_exact) return bucket + distance;
    // torch: log(float(distance) / max_exact) / math.log(max_distance / max_exact) * (buckets - max_exact),
    // each step in float32 (a Python float meeting a float tensor is rounded to float first).
    const auto ratio = static_cast<float>(distance) / static_cast<float>(max_exact);
    const auto log_range =
        static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
    const float scaled = std::log(ratio) / log_range * static_cast<float>(buckets - max_exact);
    const Eigen::Index large = max_exact + static_cast<Eigen::Index>(scaled);
    return bucket + std::min(large, buckets - 1);
}

}   // namespace headscope
