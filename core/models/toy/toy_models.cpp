#include "core/models/toy/toy_models.h"

#include "core/base/error.h"
#include "core/base/seeded_random.h"
#include "core/models/tensor_binder.h"
#include "core/models/toy/toy_init.h"
#include "core/nn/run_blocks.h"
#include "core/text/text.h"

#include <cmath>
#include <functional>
#include <string>

namespace headscope {

namespace {

using toy::HeadRows;
using toy::Sinusoid;

std::string config_text(const ToyConfig& c) {
    return "E=" + std::to_string(c.width) + " H=" + std::to_string(c.n_heads) + " L=" + std::to_string(c.n_layers);
}

std::map<std::string, std::string> config_settings(const ToyConfig& c, bool image_model) {
    std::map<std::string, std::string> s = {
        {"width", std::to_string(c.width)},
        {"heads", std::to_string(c.n_heads)},
        {"layers", std::to_string(c.n_layers)},
        {"mlp_ratio", std::to_string(c.mlp_ratio)},
        {"bias", c.bias ? "true" : "false"},
        {"seed", std::to_string(c.seed)},
        {"init", c.init == ToyInit::structured ? "structured" : "random"},
    };
    if (image_model) {
        s["image_size"] = std::to_string(c.image_size);
        s["patch_size"] = std::to_string(c.patch_size);
    } else {
        s["max_tokens"] = std::to_string(c.max_tokens);
    }
    return s;
}

// The part of a block every head shares: norms, value/output projections and MLP.
// Structured models keep these small so the residual stream (and with it the
// word/position channels the heads read) passes through the layers mostly intact.
Block make_block(const ToyConfig& c, std::size_t layer) {
    const Eigen::Index E = c.width;
    const Eigen::Index hidden = c.mlp_ratio * E;
    const std::string prefix = "layers." + std::to_string(layer);
    Block b;
    b.attention_norm = toy::unit_norm(E);
    b.mlp_norm = toy::unit_norm(E);
    b.attention.n_heads = c.n_heads;
    if (c.init == ToyInit::random) {
        b.attention.q = toy::torch_default_linear(c.seed, prefix + ".attn.q_proj", E, E, c.bias);
        b.attention.k = toy::torch_default_linear(c.seed, prefix + ".attn.k_proj", E, E, c.bias);
        b.attention.v = toy::torch_default_linear(c.seed, prefix + ".attn.v_proj", E, E, c.bias);
        b.attention.out = toy::torch_default_linear(c.seed, prefix + ".attn.out_proj", E, E, c.bias);
        b.mlp.up = toy::torch_default_linear(c.seed, prefix + ".mlp.fc1", hidden, E, c.bias);
        b.mlp.down = toy::torch_default_linear(c.seed, prefix + ".mlp.fc2", E, hidden, c.bias);
        return b;
    }
    const float e_scale = 1.0f / std::sqrt(static_cast<float>(E));
    const auto linear = [&](const std::string& name, Eigen::Index out, Eigen::Index in, float scale) {
        Linear l;
        l.weight = toy::normal_matrix(c.seed, prefix + name + ".weight", out, in, scale);
        if (c.bias) l.bias = Vector::Zero(out);
        return l;
    };
    b.attention.q.weight = Matrix::Zero(E, E);
    b.attention.k.weight = Matrix::Zero(E, E);
    if (c.bias) {
        b.attention.q.bias = Vector::Zero(E);
        b.attention.k.bias = Vector::Zero(E);
    }
    b.attention.v = linear(".attn.v_proj", E, E, e_scale);
    b.attention.out = linear(".attn.out_proj", E, E, 0.2f * e_scale);
    b.mlp.up = linear(".mlp.fc1", hidden, E, e_scale);
    b.mlp.down = linear(".mlp.fc2", E, hidden, 0.2f / std::sqrt(static_cast<float>(hidden)));
    return b;
}

// What both demo models share: their info, the encoder stack whose heads a role
// builder fills in, and the forward pass.
class ToyModel : public Model {
public:
    const ModelInfo& info() const override { return info_; }

    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override {
        StackRun run = run_blocks(info_.name, stack_, input.embeddings, options);
        run.trace.hidden = run.joined(&ModelTrace::hidden, norm_forward(final_norm_, run.x));
        return std::move(run.trace);
    }
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return stack_head_map(stack_, trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return stack_layer_stages(stack_, trace, layer, disabled_heads, only_head);
    }

protected:
    using RoleBuilder = std::function<void(AttentionWeights&, HeadRows, int role, const std::string& name)>;

    ToyModel(const ToyConfig& config, bool image_model) : config_(config) {
        validate_toy_config(config, image_model);
        info_.n_layers = config.n_layers;
        info_.n_heads = config.n_heads;
        info_.width = config.width;
        info_.head_width = config.width / config.n_heads;
        info_.mlp_width = config.mlp_ratio * config.width;
        info_.settings = config_settings(config, image_model);
    }

    // Builds every block; structured models hand head (l, h) role (l * H + h) mod 8.
    void build_stack(const RoleBuilder& build_head, const char* const (&roles)[8]) {
        const bool structured = config_.init == ToyInit::structured;
        for (Eigen::Index l = 0; l < config_.n_layers; ++l) {
            Block block = make_block(config_, static_cast<std::size_t>(l));
            std::vector<std::string> layer_roles;
            for (Eigen::Index h = 0; h < config_.n_heads; ++h) {
                if (!structured) {
                    layer_roles.emplace_back();
                    continue;
                }
                const int role = static_cast<int>((l * config_.n_heads + h) % 8);
                build_head(block.attention, HeadRows{h * info_.head_width, info_.head_width}, role,
                           "layers." + std::to_string(l) + ".head." + std::to_string(h));
                layer_roles.emplace_back(roles[role]);
            }
            info_.head_roles.push_back(std::move(layer_roles));
            stack_.blocks.push_back(std::move(block));
        }
        final_norm_ = toy::unit_norm(config_.width);
        info_.reuses_prefix = stack_reuses_prefix(stack_);   // when a run is made causal (--causal, C)
    }

    // The blocks' tensors, as tools/demo_reference.py reads them (after the model's own).
    template <typename Binder>
    void bind_blocks(Binder& b) const {
        const Eigen::Index E = config_.width;
        const Eigen::Index I = config_.mlp_ratio * E;
        const std::string why = "the demo model's settings";
        for (std::size_t l = 0; l < stack_.blocks.size(); ++l) {
            const Block& block = stack_.blocks[l];
            const std::string prefix = "layers." + std::to_string(l);
            bind_norm(b, prefix + ".ln1", block.attention_norm, E, why);
            bind_linear(b, prefix + ".attn.q_proj", block.attention.q, E, E, why, config_.bias);
            bind_linear(b, prefix + ".attn.k_proj", block.attention.k, E, E, why, config_.bias);
            bind_linear(b, prefix + ".attn.v_proj", block.attention.v, E, E, why, config_.bias);
            bind_linear(b, prefix + ".attn.out_proj", block.attention.out, E, E, why, config_.bias);
            bind_norm(b, prefix + ".ln2", block.mlp_norm, E, why);
            bind_linear(b, prefix + ".mlp.fc1", block.mlp.up, I, E, why, config_.bias);
            bind_linear(b, prefix + ".mlp.fc2", block.mlp.down, E, I, why, config_.bias);
        }
        bind_norm(b, "ln_final", final_norm_, E, why);
    }

    ToyConfig config_;
    ModelInfo info_;
    Stack stack_;
    Norm final_norm_;
};

// ------------------------------------------------------------------------------------
// toy-text

// Structured layout of the E channels: words in [0, E/2) (zero mean, fixed length),
// sinusoidal positions in [E/2, E) as E/8 groups (sin, cos, -sin, -cos), fastest
// first. Every token then has mean 0 and the same length, so Norm scales all
// tokens alike and the heads below read exactly what they were built to read.
struct TextChannels {
    Eigen::Index words;              // E/2
    std::vector<Sinusoid> waves;     // [E/4]
    Eigen::Index constant_channel;   // cos of the slowest wave: ~1 at every position
};

TextChannels text_channels(Eigen::Index E) {
    TextChannels ch;
    ch.words = E / 2;
    const Eigen::Index groups = E / 8;
    for (Eigen::Index k = 0; k < groups; ++k) {
        const float rate = std::pow(10000.0f, -static_cast<float>(k) / static_cast<float>(groups));
        const Eigen::Index c = E / 2 + 4 * k;
        ch.waves.push_back({c, c + 1, rate, c + 2, c + 3});
    }
    ch.constant_channel = ch.waves.back().cos_channel;
    return ch;
}

const char* const text_roles[] = {
    "previous token: scores from positions only, peak at key = query - 1",
    "same token: tied query/key on the word channels, attends to copies of its word",
    "first token: every query attends to position 0 (an attention sink)",
    "local window: a smooth position kernel, nearby words on both sides",
    "next token: scores from positions only, peak at key = query + 1",
    "two back: scores from positions only, peak at key = query - 2",
    "average: zero query, equal weight on every allowed key (bag of words)",
    "untrained: random query/key weights, as the tutorials initialise",
};

void build_text_head(AttentionWeights& w, HeadRows rows, int role, const TextChannels& ch, const ToyConfig& c,
                     const std::string& name) {
    const float root_dh = std::sqrt(static_cast<float>(rows.count));
    const std::vector<Sinusoid> fast(ch.waves.begin(),
                                     ch.waves.begin() + std::min<std::ptrdiff_t>(ch.waves.size(), rows.count / 2));
    switch (role) {
    case 0: toy::set_position_head(w, rows, fast, -1.0f, 5.0f * root_dh); break;
    case 1: {
        std::vector<Eigen::Index> channels;
        for (Eigen::Index r = 0; r < rows.count; ++r) channels.push_back((rows.first + r) % ch.words);
        toy::set_tied_head(w, rows, channels, 8.0f / root_dh);   // same word: score ~ 8, others ~ +-2
        break;
    }
    case 2: {
        std::vector<Eigen::Index> keys;
        for (const Sinusoid& s : fast) keys.push_back(s.cos_channel);
        toy::set_query_key_head(w, rows, ch.constant_channel, keys, std::vector<float>(keys.size(), 1.0f),
                                2.0f * root_dh);
        break;
    }
    case 3: {
        // Waves 1..4 (periods ~11 to ~180 words): a kernel that decays over a few words.
        std::vector<Sinusoid> slow;
        for (std::size_t k = 1; k < ch.waves.size() && slow.size() < std::min<std::size_t>(4, rows.count / 2); ++k) {
            slow.push_back(ch.waves[k]);
        }
        toy::set_position_head(w, rows, slow, 0.0f, 5.0f * root_dh);
        break;
    }
    case 4: toy::set_position_head(w, rows, fast, 1.0f, 5.0f * root_dh); break;
    case 5: toy::set_position_head(w, rows, fast, -2.0f, 5.0f * root_dh); break;
    case 6: break;   // q = 0: every score equal
    default: toy::set_random_head(w, rows, c.seed, name); break;
    }
}

// ------------------------------------------------------------------------------------
// toy-text, modern: Llama's block (transformers' modeling_llama.py) at demo size.

// RMSNorm eps 1e-6, weight 1 + N(0, 0.1^2): not all ones, so a test sees it applied.
Norm modern_norm(const ToyConfig& c, const std::string& name) {
    Norm norm;
    norm.kind = NormKind::rms_norm;
    norm.eps = 1e-6f;
    norm.weight = (toy::normal_matrix(c.seed, name + ".weight", c.width, 1, 0.1f).array() + 1.0f).matrix();
    return norm;
}

Block modern_block(const ToyConfig& c, Eigen::Index layer) {
    const Eigen::Index E = c.width;
    const Eigen::Index I = c.mlp_ratio * E;
    const Eigen::Index Dkv = E / 2;   // H / 2 key/value heads of Dh
    const std::string prefix = "layers." + std::to_string(layer);
    Block b;
    b.attention_norm = modern_norm(c, prefix + ".input_layernorm");
    b.mlp_norm = modern_norm(c, prefix + ".post_attention_layernorm");
    AttentionWeights& a = b.attention;
    a.n_heads = c.n_heads;
    a.n_kv_heads = c.n_heads / 2;
    a.rotary.theta = 10000.0;
    a.q = toy::torch_default_linear(c.seed, prefix + ".self_attn.q_proj", E, E, c.bias);
    a.k = toy::torch_default_linear(c.seed, prefix + ".self_attn.k_proj", Dkv, E, c.bias);
    a.v = toy::torch_default_linear(c.seed, prefix + ".self_attn.v_proj", Dkv, E, c.bias);
    a.out = toy::torch_default_linear(c.seed, prefix + ".self_attn.o_proj", E, E, false);
    a.validate();
    b.mlp.activation = Activation::silu;
    b.mlp.gate = toy::torch_default_linear(c.seed, prefix + ".mlp.gate_proj", I, E, false);
    b.mlp.up = toy::torch_default_linear(c.seed, prefix + ".mlp.up_proj", I, E, false);
    b.mlp.down = toy::torch_default_linear(c.seed, prefix + ".mlp.down_proj", E, I, false);
    return b;
}

// Llama's tensor names (without "model."): the modern model's whole weight list.
template <typename Binder>
void bind_modern_tensors(const ToyConfig& c, const Stack& stack, const Norm& final_norm, Binder& b) {
    const Eigen::Index E = c.width;
    const Eigen::Index I = c.mlp_ratio * E;
    const Eigen::Index Dkv = E / 2;
    const std::string why = "the demo model's settings";
    for (std::size_t l = 0; l < stack.blocks.size(); ++l) {
        const Block& block = stack.blocks[l];
        const std::string prefix = "layers." + std::to_string(l);
        bind_norm(b, prefix + ".input_layernorm", block.attention_norm, E, why);
        bind_linear(b, prefix + ".self_attn.q_proj", block.attention.q, E, E, why, c.bias);
        bind_linear(b, prefix + ".self_attn.k_proj", block.attention.k, Dkv, E, why, c.bias);
        bind_linear(b, prefix + ".self_attn.v_proj", block.attention.v, Dkv, E, why, c.bias);
        bind_linear(b, prefix + ".self_attn.o_proj", block.attention.out, E, E, why, false);
        bind_norm(b, prefix + ".post_attention_layernorm", block.mlp_norm, E, why);
        bind_linear(b, prefix + ".mlp.gate_proj", block.mlp.gate, I, E, why, false);
        bind_linear(b, prefix + ".mlp.up_proj", block.mlp.up, I, E, why, false);
        bind_linear(b, prefix + ".mlp.down_proj", block.mlp.down, E, I, why, false);
    }
    bind_norm(b, "norm", final_norm, E, why);
}

class ToyTextModel final : public ToyModel {
public:
    explicit ToyTextModel(const ToyConfig& config) : ToyModel(config, false) {
        if (config.arch == ToyArch::modern) {
            build_modern();
            return;
        }
        const Eigen::Index E = config.width;
        const bool structured = config.init == ToyInit::structured;
        const TextChannels ch = text_channels(E);

        // Sinusoidal positions (Vaswani et al. 2017): structured models keep them in
        // their own channels, the tutorials' way adds them over all E channels.
        positions_ = Matrix::Zero(config.max_tokens, E);
        std::vector<Sinusoid> waves = ch.waves;
        if (!structured) {
            waves.clear();
            for (Eigen::Index k = 0; k < E / 2; ++k) {
                waves.push_back(
                    {2 * k, 2 * k + 1, std::pow(10000.0f, -2.0f * static_cast<float>(k) / static_cast<float>(E))});
            }
        }
        for (Eigen::Index t = 0; t < config.max_tokens; ++t) {
            for (const Sinusoid& s : waves) toy::write_sinusoid(positions_, t, s, static_cast<float>(t));
        }
        word_channels_ = structured ? ch.words : E;

        info_.name = "builtin:toy-text";
        info_.description = "demo text encoder (" + config_text(config) + ", " +
                            (structured ? "structured heads" : "random weights") + ")";
        info_.max_tokens = config.max_tokens;
        info_.takes_text = true;
        build_stack([&](AttentionWeights& w, HeadRows rows, int role,
                        const std::string& name) { build_text_head(w, rows, role, ch, config, name); },
                    text_roles);
        ParameterCounter counter;
        bind_tensors(counter);
        info_.n_parameters = counter.count();
    }

    ModelInput encode_text(std::string_view text) const override {
        const std::vector<TextToken> tokens = tokenize_words(text, "text");
        if (tokens.empty()) throw Error("text: the sentence is empty (no words or punctuation)");
        check_length(static_cast<Eigen::Index>(tokens.size()));
        std::vector<std::int64_t> ids;
        for (const TextToken& t : tokens) ids.push_back(toy_text_token_id(t.text));
        ModelInput input = embed(ids);
        input.labels.clear();
        input.spans.clear();
        for (const TextToken& t : tokens) {
            input.labels.push_back(t.text);
            input.spans.emplace_back(t.begin, t.end);
        }
        return input;
    }

    ModelInput encode_ids(std::span<const std::int64_t> ids) const override {
        if (ids.empty()) throw Error("--tokens: no token ids given");
        check_length(static_cast<Eigen::Index>(ids.size()));
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] < 0 || ids[i] >= toy_text_id_limit) {
                throw Error("--tokens: id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                            " is outside 0.." + std::to_string(toy_text_id_limit - 1));
            }
        }
        return embed(std::vector<std::int64_t>(ids.begin(), ids.end()));
    }

    std::vector<OwnedTensor> export_weights() const override {
        TensorExporter exporter;
        bind_tensors(exporter);
        return exporter.take();
    }

private:
    template <typename Binder>
    void bind_tensors(Binder& b) const {
        if (config_.arch == ToyArch::modern) {
            bind_modern_tensors(config_, stack_, final_norm_, b);
            return;
        }
        b.matrix("embeddings.position", positions_, config_.max_tokens, config_.width, "--max-tokens, --width");
        bind_blocks(b);
    }

    // Rotary positions instead of position embeddings, random weights, causal.
    void build_modern() {
        config_.init = ToyInit::random;
        for (Eigen::Index l = 0; l < config_.n_layers; ++l) {
            stack_.blocks.push_back(modern_block(config_, l));
            info_.head_roles.emplace_back(static_cast<std::size_t>(config_.n_heads));
        }
        final_norm_ = modern_norm(config_, "norm");
        word_channels_ = config_.width;
        info_.name = "builtin:toy-text";
        info_.description = "demo text decoder, modern (" + config_text(config_) + ", " +
                            std::to_string(config_.n_heads / 2) +
                            " key/value heads, rotary positions, RMSNorm, SwiGLU; random weights)";
        info_.max_tokens = config_.max_tokens;
        info_.takes_text = true;
        info_.causal = true;
        info_.reuses_prefix = stack_reuses_prefix(stack_);
        stack_.spec.causal = true;
        info_.settings["arch"] = "modern";
        info_.settings["init"] = "random";
        ParameterCounter counter;
        bind_tensors(counter);
        info_.n_parameters = counter.count();
    }

    void check_length(Eigen::Index n) const {
        if (n > config_.max_tokens) {
            throw Error("text: " + std::to_string(n) + " tokens, more than builtin:toy-text's limit of " +
                        std::to_string(config_.max_tokens) + " (raise it with --max-tokens)");
        }
    }

    // Word vector of id: N(0, 1) in the word channels from seeded_normal(seed,
    // stream_of("embeddings.word"), id * E + channel) (rescaled to RMS 1 when
    // structured), so equal words get equal vectors and tools/demo_reference.py can
    // recompute them; plus the position row.
    ModelInput embed(const std::vector<std::int64_t>& ids) const {
        const Eigen::Index E = config_.width;
        const std::uint64_t stream = toy::stream_of("embeddings.word");
        ModelInput input;
        input.ids = ids;
        const auto T = static_cast<Eigen::Index>(ids.size());
        input.embeddings = positions_.size() != 0 ? Matrix(positions_.topRows(T)) : Matrix::Zero(T, E);
        for (std::size_t t = 0; t < ids.size(); ++t) {
            RowVector word(word_channels_);
            for (Eigen::Index c = 0; c < word_channels_; ++c) {
                const auto index =
                    static_cast<std::uint64_t>(ids[t]) * static_cast<std::uint64_t>(E) + static_cast<std::uint64_t>(c);
                word(c) = seeded_normal(config_.seed, stream, index);
            }
            // Structured: every word vector has mean 0 and RMS 1 (see TextChannels).
            if (config_.init == ToyInit::structured && config_.arch == ToyArch::classic) {
                word.array() -= word.mean();
                word *= std::sqrt(static_cast<float>(word_channels_)) / word.norm();
            }
            input.embeddings.row(static_cast<Eigen::Index>(t)).head(word_channels_) += word;
            std::string label = "#";   // built in two steps: GCC 12 mis-warns on "#" + std::string
            label += std::to_string(ids[t]);
            input.labels.push_back(std::move(label));
            input.spans.emplace_back(0, 0);
        }
        return input;
    }

    Matrix positions_;             // [max_tokens, E]
    Eigen::Index word_channels_;   // how many leading channels hold the word vector
};

// ------------------------------------------------------------------------------------
// toy-vit

// Structured layout of the E channels: image features in [0, E/2): mean colour
// (0..2), horizontal (3..5) and vertical (6..8) colour gradients, seeded filters
// after that, a constant 1 (E/2 - 2, the patch bias) and the [CLS] flag (E/2 - 1);
// 2-D sinusoidal positions in [E/2, E): x waves first, then y waves.
struct VitChannels {
    Eigen::Index features;           // E/2
    Eigen::Index constant_channel;   // 1 for every token
    Eigen::Index cls_channel;        // 1 for [CLS] only (scaled)
    std::vector<Sinusoid> x_waves;   // fastest first
    std::vector<Sinusoid> y_waves;
};

VitChannels vit_channels(Eigen::Index E) {
    VitChannels ch;
    ch.features = E / 2;
    ch.constant_channel = E / 2 - 2;
    ch.cls_channel = E / 2 - 1;
    // E/8 groups (sin, cos, -sin, -cos), half per axis, rates from pi/2 (a 4-patch
    // period) halving every two.
    const Eigen::Index per_axis = E / 16;
    for (Eigen::Index k = 0; k < per_axis; ++k) {
        const float rate = 1.5707963f * std::pow(2.0f, -0.5f * static_cast<float>(k));
        const Eigen::Index x = E / 2 + 4 * k;
        const Eigen::Index y = E / 2 + 4 * (per_axis + k);
        ch.x_waves.push_back({x, x + 1, rate, x + 2, x + 3});
        ch.y_waves.push_back({y, y + 1, rate, y + 2, y + 3});
    }
    return ch;
}

const char* const vit_roles[] = {
    "same colour: tied query/key on mean-colour channels, patches attend to patches of their colour",
    "neighbourhood: a smooth 2-D position kernel, patches attend to the patches around them",
    "same row: position kernel on y only, patches attend along their row",
    "[CLS] gathers: [CLS] attends to warm (red, yellow) patches; patches spread evenly",
    "same column: position kernel on x only, patches attend along their column",
    "same texture: tied query/key on colour-gradient channels (edges attend to edges)",
    "attends to [CLS]: every token looks at [CLS] (an attention sink)",
    "untrained: random query/key weights, as the tutorials initialise",
};

void build_vit_head(AttentionWeights& w, HeadRows rows, int role, const VitChannels& ch, const ToyConfig& c,
                    const std::string& name) {
    const float root_dh = std::sqrt(static_cast<float>(rows.count));
    const auto slow = [&](const std::vector<Sinusoid>& waves) {
        // Skip the fastest wave: the rest decay over a few patches.
        return std::vector<Sinusoid>(waves.begin() + std::min<std::ptrdiff_t>(1, waves.size()), waves.end());
    };
    switch (role) {
    case 0: toy::set_tied_head(w, rows, {0, 1, 2}, 6.0f / root_dh); break;
    case 1: {
        std::vector<Sinusoid> waves;
        const auto sx = slow(ch.x_waves);
        const auto sy = slow(ch.y_waves);
        for (std::size_t k = 0; k < std::max(sx.size(), sy.size()); ++k) {
            if (k < sx.size()) waves.push_back(sx[k]);
            if (k < sy.size()) waves.push_back(sy[k]);
        }
        toy::set_position_head(w, rows, waves, 0.0f, 0.5f * root_dh);
        break;
    }
    case 2: toy::set_position_head(w, rows, ch.y_waves, 0.0f, 3.0f * root_dh); break;
    case 3: toy::set_query_key_head(w, rows, ch.cls_channel, {0, 2}, {1.0f, -1.0f}, 3.0f * root_dh); break;
    case 4: toy::set_position_head(w, rows, ch.x_waves, 0.0f, 3.0f * root_dh); break;
    case 5: toy::set_tied_head(w, rows, {3, 4, 5, 6, 7, 8}, 6.0f / root_dh); break;
    case 6: toy::set_query_key_head(w, rows, ch.constant_channel, {ch.cls_channel}, {1.0f}, 3.0f * root_dh); break;
    default: toy::set_random_head(w, rows, c.seed, name); break;
    }
}

class ToyVitModel final : public ToyModel {
public:
    explicit ToyVitModel(const ToyConfig& config) : ToyModel(config, true) {
        const Eigen::Index E = config.width;
        const int P = config.patch_size;
        const int grid = config.image_size / P;
        const Eigen::Index N = static_cast<Eigen::Index>(grid) * grid;
        const bool structured = config.init == ToyInit::structured;
        const VitChannels ch = vit_channels(E);

        if (structured) {
            // A linear patch embedding that measures colour and edges: each feature
            // channel is a fixed filter over the P x P x 3 patch (Conv2d weight layout).
            const Eigen::Index K = 3 * P * P;
            Matrix patch_weight = Matrix::Zero(E, K);
            patch_bias_ = Vector::Zero(E);
            const float area = static_cast<float>(P * P);
            for (int colour = 0; colour < 3; ++colour) {
                for (int y = 0; y < P; ++y) {
                    for (int x = 0; x < P; ++x) {
                        const Eigen::Index k = (colour * P + y) * P + x;
                        patch_weight(colour, k) = 2.0f / area;                             // mean, x2
                        patch_weight(3 + colour, k) = (x < P / 2 ? -4.0f : 4.0f) / area;   // left -> right
                        patch_weight(6 + colour, k) = (y < P / 2 ? -4.0f : 4.0f) / area;   // top -> bottom
                    }
                }
            }
            const Matrix filters = toy::normal_matrix(config.seed, "embeddings.patch.filters", ch.features - 11, K,
                                                      0.3f / std::sqrt(static_cast<float>(K)));
            patch_weight.middleRows(9, ch.features - 11) = filters;
            patch_weight_ = std::move(patch_weight);
            patch_bias_(ch.constant_channel) = 1.0f;
            cls_ = Vector::Zero(E);
            cls_(ch.constant_channel) = 1.0f;
            cls_(ch.cls_channel) = 3.0f;
            positions_ = Matrix::Zero(N + 1, E);   // row 0 is [CLS]'s: no position
            for (int r = 0; r < grid; ++r) {
                for (int col = 0; col < grid; ++col) {
                    const Eigen::Index row = 1 + r * grid + col;
                    for (const Sinusoid& s : ch.x_waves)
                        toy::write_sinusoid(positions_, row, s, static_cast<float>(col));
                    for (const Sinusoid& s : ch.y_waves) toy::write_sinusoid(positions_, row, s, static_cast<float>(r));
                }
            }
        } else {
            // As PyTorch initialises a ViT: Conv2d's uniform patch embedding, and small
            // normal [CLS] and positions (std 0.02, as timm and Hugging Face do).
            const Linear conv = toy::torch_default_linear(config.seed, "embeddings.patch", E, 3 * P * P, true);
            patch_weight_ = conv.weight;
            patch_bias_ = conv.bias;
            cls_ = toy::normal_matrix(config.seed, "embeddings.cls", E, 1, 0.02f);
            positions_ = toy::normal_matrix(config.seed, "embeddings.position", N + 1, E, 0.02f);
        }

        info_.name = "builtin:toy-vit";
        info_.description = "demo ViT image encoder (" + config_text(config) + ", " +
                            std::to_string(config.image_size) + " px, P=" + std::to_string(P) + ", " +
                            (structured ? "structured heads" : "random weights") + ")";
        info_.max_tokens = N + 1;
        info_.takes_image = true;
        info_.image_size = config.image_size;
        info_.patch_size = P;
        build_stack([&](AttentionWeights& w, HeadRows rows, int role,
                        const std::string& name) { build_vit_head(w, rows, role, ch, config, name); },
                    vit_roles);
        ParameterCounter counter;
        bind_tensors(counter);
        info_.n_parameters = counter.count();
    }

    // Resize (Pillow bilinear, as ViTImageProcessor) unless already at size, rescale by
    // 1/255, normalise with mean = std = 0.5, embed patches, prepend [CLS], add positions.
    using Model::encode_image;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override {
        if (options.own_resolution) {
            throw Error(info_.name + " runs at its own " + std::to_string(config_.image_size) +
                        " px only (its positions are built for that grid); own resolution needs a checkpoint");
        }
        const int S = config_.image_size;
        const RgbImage sized =
            (image.width == S && image.height == S) ? image : resize_image(image, S, S, Resample::bilinear);
        const float half[3] = {0.5f, 0.5f, 0.5f};
        const ImageTensor pixels = normalize_image(sized, 1.0f / 255.0f, half, half);
        const Matrix patches = patch_embed(pixels, config_.patch_size, patch_weight_, patch_bias_);   // [N, E]
        ModelInput input;
        input.embeddings.resize(patches.rows() + 1, config_.width);
        input.embeddings.row(0) = cls_.transpose();
        input.embeddings.bottomRows(patches.rows()) = patches;
        input.embeddings += positions_;
        input.grid_width = S / config_.patch_size;
        input.grid_height = S / config_.patch_size;
        input.n_prefix_tokens = 1;
        input.pixels = sized;
        input.labels.push_back("[CLS]");
        for (Eigen::Index n = 0; n < patches.rows(); ++n) {
            std::string label = "p";
            label += std::to_string(n);
            input.labels.push_back(std::move(label));
        }
        return input;
    }

    std::vector<OwnedTensor> export_weights() const override {
        TensorExporter exporter;
        bind_tensors(exporter);
        return exporter.take();
    }

private:
    template <typename Binder>
    void bind_tensors(Binder& b) const {
        const Eigen::Index E = config_.width;
        const Eigen::Index P = config_.patch_size;
        const std::string why = "--width, --patch";
        b.weight("embeddings.patch.weight", patch_weight_, E, 3 * P * P, why, {E, 3, P, P});   // as Conv2d stores it
        b.vector("embeddings.patch.bias", patch_bias_, E, why);
        b.vector("embeddings.cls", cls_, E, why);
        b.matrix("embeddings.position", positions_, positions_.rows(), E, why);
        bind_blocks(b);
    }

    WeightMatrix patch_weight_;   // [E, 3 * P * P]
    Vector patch_bias_;           // [E]
    Vector cls_;                  // [E]
    Matrix positions_;            // [N + 1, E]
};

}   // namespace

std::int64_t toy_text_token_id(std::string_view word) {
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : word) {
        hash ^= c;
        hash *= 16777619u;
    }
    return static_cast<std::int64_t>(hash & 0x7fffffffu);
}

// A demo model is for watching heads, and is built (and held) as F32 in memory before
// anything runs: 100 M weights (400 MB, GPT-2 small's size) is as large as it may get,
// so that --width 4096 --layers 64 (13 G weights, 52 GB) is refused rather than built.
constexpr std::int64_t max_toy_weights = 100'000'000;

void validate_toy_config(const ToyConfig& c, bool image_model) {
    const auto bad = [](const std::string& what) { throw Error("model settings: " + what); };
    if (c.width < 8 || c.width > 4096) bad("width E = " + std::to_string(c.width) + " must be in 8..4096");
    if (c.width % 8 != 0) bad("width E = " + std::to_string(c.width) + " must be a multiple of 8");
    if (c.n_heads < 1 || c.n_heads > 256) bad("heads H = " + std::to_string(c.n_heads) + " must be in 1..256");
    if (c.width % c.n_heads != 0) {
        bad("width E = " + std::to_string(c.width) + " is not divisible by H = " + std::to_string(c.n_heads));
    }
    const Eigen::Index Dh = c.width / c.n_heads;
    if (Dh < 2 || Dh % 2 != 0) bad("head width E / H = " + std::to_string(Dh) + " must be even and at least 2");
    if (c.arch == ToyArch::modern && (image_model || c.n_heads % 2 != 0)) {
        bad(image_model ? std::string("the modern architecture is for toy-text")
                        : "the modern architecture shares each key/value head between 2 query heads, so H = " +
                              std::to_string(c.n_heads) + " must be even");
    }
    if (c.n_layers < 1 || c.n_layers > 64) bad("layers L = " + std::to_string(c.n_layers) + " must be in 1..64");
    if (c.mlp_ratio < 1 || c.mlp_ratio > 16) bad("mlp ratio must be in 1..16");
    // Per layer: Q, K, V and the output projection (4 E^2), the MLP's two (2 r E^2).
    const std::int64_t weights = static_cast<std::int64_t>(c.n_layers) * (4 + 2 * c.mlp_ratio) * c.width * c.width;
    if (weights > max_toy_weights) {
        bad("E = " + std::to_string(c.width) + " and L = " + std::to_string(c.n_layers) + " make " +
            std::to_string(weights / 1'000'000) + " M weights, more than a demo model's " +
            std::to_string(max_toy_weights / 1'000'000) + " M (a demo is built in memory before it runs)");
    }
    if (!image_model && (c.max_tokens < 1 || c.max_tokens > 8192)) {
        bad("max tokens = " + std::to_string(c.max_tokens) + " must be in 1..8192");
    }
    if (image_model) {
        if (c.patch_size < 2 || c.patch_size > 64)
            bad("patch size P = " + std::to_string(c.patch_size) + " must be in 2..64");
        if (c.image_size < c.patch_size || c.image_size > 1024) {
            bad("image size = " + std::to_string(c.image_size) + " must be in P..1024");
        }
        if (c.image_size % c.patch_size != 0) {
            bad("image size " + std::to_string(c.image_size) +
                " is not a multiple of P = " + std::to_string(c.patch_size));
        }
        if (c.width < 32 || c.width % 16 != 0) {
            bad("width E = " + std::to_string(c.width) + " must be a multiple of 16 and at least 32 for toy-vit");
        }
    }
}

std::unique_ptr<Model> make_toy_text(const ToyConfig& config) { return std::make_unique<ToyTextModel>(config); }
std::unique_ptr<Model> make_toy_vit(const ToyConfig& config) { return std::make_unique<ToyVitModel>(config); }

}   // namespace headscope
