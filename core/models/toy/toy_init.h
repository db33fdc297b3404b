#pragma once
// Building blocks of the demo models' weights: seeded tensors (each named tensor has
// its own random stream, core/base/seeded_random.h) and the structured heads, each a
// small recipe on the rows of one head in the q/k projections.

#include "core/nn/attention.h"
#include "core/nn/layers.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace headscope::toy {

// FNV-1a (64-bit) of a tensor's name: its random stream.
std::uint64_t stream_of(std::string_view name);

// N(0, scale^2) entries, element i of tensor `name` from seeded_normal(seed, stream_of(name), i).
Matrix normal_matrix(std::uint64_t seed, std::string_view name, Eigen::Index rows, Eigen::Index cols, float scale);
// nn.Linear's default: weight and bias U(-1/sqrt(in), 1/sqrt(in)) (bias only when wanted).
Linear torch_default_linear(std::uint64_t seed, std::string_view name, Eigen::Index out, Eigen::Index in, bool bias);
// weight 1, bias 0.
Norm unit_norm(Eigen::Index width);

// One sinusoid of a position encoding: x[sin_channel] = sin(p * rate), x[cos_channel] =
// cos(p * rate), and, when present (>= 0), their negatives in two more channels: the
// four sum to zero at every position, so LayerNorm's mean subtraction cannot turn the
// encoding into a key-dependent bias.
struct Sinusoid {
    Eigen::Index sin_channel;
    Eigen::Index cos_channel;
    float rate;
    Eigen::Index neg_sin_channel = -1;
    Eigen::Index neg_cos_channel = -1;
};

// Writes the sinusoid's channels for position p into row `row` of `table`.
void write_sinusoid(Matrix& table, Eigen::Index row, const Sinusoid& wave, float p);

// The rows of head `head` (width Dh) in a q/k/v projection.
struct HeadRows {
    Eigen::Index first;   // head * Dh
    Eigen::Index count;   // Dh
};

// q . k peaks where key position = query position + shift (per sinusoid, q is k's
// encoding rotated by shift * rate). shift 0 gives a smooth local window.
void set_position_head(AttentionWeights& w, HeadRows rows, const std::vector<Sinusoid>& waves, float shift, float gain);
// q = k = gain * the listed channels (cycled over the head's rows): tokens attend to
// tokens whose channels point the same way.
void set_tied_head(AttentionWeights& w, HeadRows rows, const std::vector<Eigen::Index>& channels, float gain);
// One q row reads `query_channel`; the matching k row sums `key_channels` with
// `key_signs`: score(i, j) = gain * x_i[query_channel] * sum_c sign_c x_j[c].
void set_query_key_head(AttentionWeights& w, HeadRows rows, Eigen::Index query_channel,
                        const std::vector<Eigen::Index>& key_channels, const std::vector<float>& key_signs, float gain);
// Seeded N(0, 1/E) rows, as an untrained head.
void set_random_head(AttentionWeights& w, HeadRows rows, std::uint64_t seed, std::string_view name);

}   // namespace headscope::toy
