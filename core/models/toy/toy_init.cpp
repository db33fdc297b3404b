#include "core/models/toy/toy_init.h"

#include "core/base/seeded_random.h"

#include <cmath>

namespace headscope::toy {

std::uint64_t stream_of(std::string_view name) {
    std::uint64_t hash = 14695981039346656037ull;
    for (unsigned char c : name) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    return hash;
}

Matrix normal_matrix(std::uint64_t seed, std::string_view name, Eigen::Index rows, Eigen::Index cols, float scale) {
    const std::uint64_t stream = stream_of(name);
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) {
        m.data()[i] = scale * seeded_normal(seed, stream, static_cast<std::uint64_t>(i));
    }
    return m;
}

namespace {

Matrix uniform_matrix(std::uint64_t seed, std::string_view name, Eigen::Index rows, Eigen::Index cols, float bound) {
    const std::uint64_t stream = stream_of(name);
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) {
        const double u = seeded_uniform(seed, stream, static_cast<std::uint64_t>(i));
        m.data()[i] = static_cast<float>((2.0 * u - 1.0) * bound);
    }
    return m;
}

}   // namespace

Linear torch_default_linear(std::uint64_t seed, std::string_view name, Eigen::Index out, Eigen::Index in, bool bias) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    Linear layer;
    layer.weight = uniform_matrix(seed, std::string(name) + ".weight", out, in, bound);
    if (bias) layer.bias = uniform_matrix(seed, std::string(name) + ".bias", out, 1, bound);
    return layer;
}

Norm unit_norm(Eigen::Index width) {
    Norm norm;
    norm.weight = Vector::Ones(width);
    norm.bias = Vector::Zero(width);
    return norm;
}

void write_sinusoid(Matrix& table, Eigen::Index row, const Sinusoid& wave, float p) {
    const float s = std::sin(p * wave.rate);
    const float c = std::cos(p * wave.rate);
    table(row, wave.sin_channel) = s;
    table(row, wave.cos_channel) = c;
    if (wave.neg_sin_channel >= 0) table(row, wave.neg_sin_channel) = -s;
    if (wave.neg_cos_channel >= 0) table(row, wave.neg_cos_channel) = -c;
}

void set_position_head(AttentionWeights& w, HeadRows rows, const std::vector<Sinusoid>& waves, float shift,
                       float gain) {
    for (Eigen::Index m = 0; m < static_cast<Eigen::Index>(waves.size()) && 2 * m + 1 < rows.count; ++m) {
        const Sinusoid& wave = waves[static_cast<std::size_t>(m)];
        const float angle = shift * wave.rate;
        const float c = std::cos(angle);
        const float s = std::sin(angle);
        const Eigen::Index r = rows.first + 2 * m;
        // q = R(angle) (sin a, cos a) = (sin(a + angle), cos(a + angle)): the encoding
        // `shift` positions on, so q . k_j = sum cos((i + shift - j) rate) peaks at j = i + shift.
        w.q.weight.values()(r, wave.sin_channel) = gain * c;
        w.q.weight.values()(r, wave.cos_channel) = gain * s;
        w.q.weight.values()(r + 1, wave.sin_channel) = -gain * s;
        w.q.weight.values()(r + 1, wave.cos_channel) = gain * c;
        w.k.weight.values()(r, wave.sin_channel) = 1.0f;
        w.k.weight.values()(r + 1, wave.cos_channel) = 1.0f;
    }
}

void set_tied_head(AttentionWeights& w, HeadRows rows, const std::vector<Eigen::Index>& channels, float gain) {
    const float g = std::sqrt(gain);
    for (Eigen::Index r = 0; r < rows.count && r < static_cast<Eigen::Index>(channels.size()); ++r) {
        const Eigen::Index channel = channels[static_cast<std::size_t>(r)];
        w.q.weight.values()(rows.first + r, channel) = g;
        w.k.weight.values()(rows.first + r, channel) = g;
    }
}

void set_query_key_head(AttentionWeights& w, HeadRows rows, Eigen::Index query_channel,
                        const std::vector<Eigen::Index>& key_channels, const std::vector<float>& key_signs,
                        float gain) {
    w.q.weight.values()(rows.first, query_channel) = gain;
    for (std::size_t i = 0; i < key_channels.size(); ++i)
        w.k.weight.values()(rows.first, key_channels[i]) = key_signs[i];
}

void set_random_head(AttentionWeights& w, HeadRows rows, std::uint64_t seed, std::string_view name) {
    const Eigen::Index E = w.q.weight.cols();
    const float scale = 1.0f / std::sqrt(static_cast<float>(E));
    w.q.weight.values().middleRows(rows.first, rows.count) =
        normal_matrix(seed, std::string(name) + ".q", rows.count, E, scale);
    w.k.weight.values().middleRows(rows.first, rows.count) =
        normal_matrix(seed, std::string(name) + ".k", rows.count, E, scale);
}

}   // namespace headscope::toy
