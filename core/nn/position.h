#pragma once
// Positions applied to queries and keys before the scores: rotary embeddings (RoPE), as
// transformers' rotary embedding classes and modeling_rope_utils.py compute them. Each
// head's first `rotary_width` features (all when 0; partial rotary, as Phi and Pythia,
// rotates fewer) turn in pairs, pair i by the angle position * inv_freq[i]:
//   - rotate_half (NeoX's layout; Llama, Qwen, Mistral, Gemma, Phi-3, Pythia): the pair
//     (x_i, x_{i + r/2});
//   - interleaved (GPT-J's layout): the pair (x_{2i}, x_{2i+1}).
// inv_freq is theta^(-2i / r), changed by the checkpoint's rope scaling (`RopeScaling`);
// some scalings also multiply cos and sin by an attention factor (YaRN, LongRoPE), and
// two depend on the sequence's length (dynamic NTK past the trained length; LongRoPE's
// long factors past the original length).

#include "core/tensor/matrix.h"

#include <string>
#include <vector>

namespace headscope {

enum class RotaryLayout { rotate_half, interleaved };

// config.json's rope_scaling (or rope_parameters), as transformers reads it.
struct RopeScaling {
    enum class Type { none, linear, dynamic, yarn, longrope, llama3 };
    Type type = Type::none;
    double factor = 1.0;
    // llama3: low / high frequency factors and the original context; yarn: the original
    // context (0: max_position_embeddings, and then `factor` as given); longrope: the
    // length past which the long factors apply.
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    Eigen::Index original_max_positions = 0;
    Eigen::Index max_positions = 0;   // the config's max_position_embeddings (dynamic, yarn, longrope)
    // yarn
    double beta_fast = 32.0;
    double beta_slow = 1.0;
    double mscale = 0.0;           // 0: absent
    double mscale_all_dim = 0.0;   // 0: absent
    bool truncate = true;
    // yarn, longrope: the cos/sin factor; < 0: derived from the factor as transformers does
    double attention_factor = -1.0;
    // longrope: one factor per rotated pair, for short and long sequences
    std::vector<double> short_factor;
    std::vector<double> long_factor;

    // "linear", "llama3", ... for `info`; "none" without scaling.
    std::string type_name() const;
};

struct Rotary {
    double theta = 0.0;              // rope_theta; 0: no rotary positions
    Eigen::Index rotary_width = 0;   // features of each head that turn (even); 0: the whole head
    RotaryLayout layout = RotaryLayout::rotate_half;
    RopeScaling scaling;

    bool active() const { return theta > 0.0; }
    // Whether the angles of a position depend on how long the sequence is (dynamic NTK,
    // LongRoPE): then a run's rows cannot be reused by a longer run.
    bool depends_on_length() const {
        return scaling.type == RopeScaling::Type::dynamic || scaling.type == RopeScaling::Type::longrope;
    }
};

// The frequencies and the cos/sin factor for a head of `rotated` features (r) in a
// sequence of `sequence_length` positions.
struct RotaryFrequencies {
    std::vector<float> inverse;   // [r / 2]
    float attention_factor = 1.0f;
};
RotaryFrequencies rotary_frequencies(const Rotary& rotary, Eigen::Index rotated, Eigen::Index sequence_length);

// T5's relative position bias: a learned number per head for each bucket of a key's offset
// from its query, added to the scores (transformers' T5Attention.compute_bias). An offset
// of fewer than buckets / 4 places (bidirectional; buckets / 2 causal) has a bucket of its
// own; longer ones share log-spaced buckets up to `max_distance`, past which all share the
// last. Bidirectional (the encoder): keys after the query take the upper half of the
// buckets; causal (the decoder): a key after its query counts as offset 0.
struct RelativePositionBias {
    Matrix table;   // [buckets, H]; empty: none
    bool bidirectional = true;
    Eigen::Index max_distance = 128;

    bool active() const { return table.size() != 0; }
    Eigen::Index buckets() const { return table.rows(); }
};

// The bucket of `offset` (key position - query position), as T5's _relative_position_bucket
// computes it (the log in float, as PyTorch does).
Eigen::Index relative_position_bucket(Eigen::Index offset, bool bidirectional, Eigen::Index buckets,
                                      Eigen::Index max_distance);

// Turns each of x's heads ([T, n_heads * Dh], head h in columns h*Dh ..) in place; row t
// sits at position `first_position + t` of a sequence `sequence_length` long (prefix
// reuse computes rows after kept ones; 0: first_position + T).
void apply_rotary(const Rotary& rotary, MatrixRef x, Eigen::Index n_heads, Eigen::Index first_position,
                  Eigen::Index sequence_length = 0);

}   // namespace headscope
