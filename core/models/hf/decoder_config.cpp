#include "core/models/hf/decoder_config.h"

#include "core/base/error.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace headscope {

namespace {

using json = nlohmann::json;
using Type = RopeScaling::Type;

Type rope_type_of(const HfFields& s, const json& scaling) {
    const char* key = scaling.contains("rope_type") ? "rope_type" : "type";
    const std::string name = s.string(key, "default");
    static const std::map<std::string, Type> types = {{"default", Type::none},      {"linear", Type::linear},
                                                      {"dynamic", Type::dynamic},   {"yarn", Type::yarn},
                                                      {"longrope", Type::longrope}, {"llama3", Type::llama3}};
    const auto it = types.find(name);
    if (it == types.end()) {
        s.fail(key, hf_quoted(name) + " is not a RoPE type this build computes (supported: default, linear, "
                                      "dynamic, yarn, longrope, llama3)");
    }
    return it->second;
}

std::vector<double> factor_list(const HfFields& s, const json& scaling, const std::string& name, Eigen::Index n) {
    const json* list = s.find(name);
    if (list == nullptr) s.fail(name, "is missing (longrope needs short_factor and long_factor)");
    if (!list->is_array()) s.fail(name, "a list of " + std::to_string(n) + " numbers", *list);
    if (static_cast<Eigen::Index>(list->size()) != n) {
        s.fail(name, "has " + std::to_string(list->size()) + " values, expected " + std::to_string(n) +
                         " (one per rotated pair: half of head_dim x partial_rotary_factor)");
    }
    std::vector<double> values;
    for (const json& v : *list) {
        values.push_back(s.number_value(name, v));
        if (!(values.back() > 0)) s.fail(name, "positive numbers", v);
    }
    (void)scaling;
    return values;
}

// A positive number of at most a million (no checkpoint scales RoPE by more; a larger one
// would overflow the lengths derived from it).
double positive(const HfFields& s, const std::string& name, double fallback, bool required = false) {
    if (required && s.find(name) == nullptr) s.fail(name, "is missing (this RoPE type needs it)");
    const double value = s.number(name, fallback);
    if (!(value > 0 && value <= 1e6)) s.fail(name, "a positive number of at most 1e6", *s.find(name));
    return value;
}

RopeScaling read_scaling(const HfFields& top, const json& scaling, const std::string& within,
                         Eigen::Index max_positions, Eigen::Index rotated) {
    const HfFields s(scaling, top.file(), within);
    if (!scaling.is_object()) top.fail(within.substr(0, within.size() - 1), "an object", scaling);
    RopeScaling r;
    r.type = rope_type_of(s, scaling);
    r.max_positions = max_positions;
    const bool needs_factor = r.type == Type::linear || r.type == Type::dynamic || r.type == Type::llama3 ||
                              (r.type == Type::yarn && s.find("original_max_position_embeddings") == nullptr);
    r.factor = positive(s, "factor", 1.0, needs_factor);
    const auto original = [&](bool required) {
        if (required && s.find("original_max_position_embeddings") == nullptr) {
            s.fail("original_max_position_embeddings", "is missing (this RoPE type needs it)");
        }
        return s.integer("original_max_position_embeddings", 0, 1, 1 << 30);
    };
    switch (r.type) {
    case Type::none:
    case Type::linear:
    case Type::dynamic: break;
    case Type::llama3:
        r.low_freq_factor = positive(s, "low_freq_factor", 1.0, true);
        r.high_freq_factor = positive(s, "high_freq_factor", 4.0, true);
        if (r.high_freq_factor <= r.low_freq_factor) {
            s.fail("high_freq_factor", "must be greater than low_freq_factor");
        }
        r.original_max_positions = original(true);
        break;
    case Type::yarn:
        r.original_max_positions = original(false);
        r.beta_fast = positive(s, "beta_fast", 32.0);
        r.beta_slow = positive(s, "beta_slow", 1.0);
        r.mscale = s.number("mscale", 0.0);
        r.mscale_all_dim = s.number("mscale_all_dim", 0.0);
        r.attention_factor = s.find("attention_factor") ? positive(s, "attention_factor", 1.0) : -1.0;
        r.truncate = s.boolean("truncate", true);
        break;
    case Type::longrope:
        r.short_factor = factor_list(s, scaling, "short_factor", rotated / 2);
        r.long_factor = factor_list(s, scaling, "long_factor", rotated / 2);
        r.attention_factor = s.find("attention_factor") ? positive(s, "attention_factor", 1.0) : -1.0;
        // Phi-3 keeps its pretrained length at the top level and derives the factor from it.
        if (const auto top_original = top.integer("original_max_position_embeddings", 0, 1, 1 << 30)) {
            r.original_max_positions = top_original;
            r.factor = static_cast<double>(max_positions) / static_cast<double>(top_original);
        } else {
            r.original_max_positions = original(false);
            if (r.original_max_positions == 0) r.original_max_positions = max_positions;
        }
        // Its attention factor divides by log(original length).
        if (r.original_max_positions < 2) s.fail("original_max_position_embeddings", "at least 2 for longrope");
        break;
    }
    return r;
}

}   // namespace

Rotary read_rotary(const HfFields& f, double theta_fallback, Eigen::Index rotated, Eigen::Index max_positions,
                   const std::string& kind) {
    Rotary rotary;
    rotary.theta = f.number("rope_theta", theta_fallback);
    rotary.rotary_width = rotated;
    const json* scaling = f.find("rope_scaling");
    std::string within = "rope_scaling.";
    if (const json* parameters = f.find("rope_parameters")) {
        // transformers 5 writes the base into rope_parameters, per layer kind where they differ.
        within = "rope_parameters.";
        scaling = parameters;
        if (parameters->is_object() &&
            (parameters->contains("full_attention") || parameters->contains("sliding_attention"))) {
            if (!parameters->contains(kind)) f.fail("rope_parameters", "has no " + hf_quoted(kind) + " entry");
            scaling = &parameters->at(kind);
            within += kind + ".";
        }
        const HfFields p(*scaling, f.file(), within);
        if (scaling->is_object()) rotary.theta = p.number("rope_theta", rotary.theta);
    }
    if (!(rotary.theta > 0)) f.fail("rope_theta", "a positive number", rotary.theta);
    if (scaling != nullptr) rotary.scaling = read_scaling(f, *scaling, within, max_positions, rotated);
    return rotary;
}

DecoderConfig read_decoder_basics(const HfFields& f, const DecoderFamily& family, const DecoderDefaults& d) {
    DecoderConfig c;
    c.model_type = f.string("model_type", "");
    if (c.model_type != family.model_type) {
        f.fail("model_type", "expected " + hf_quoted(family.model_type) + ", got " + hf_quoted(c.model_type));
    }
    c.architecture = read_hf_architecture(f, family.model_type, family.architectures);
    if (c.architecture.empty()) c.architecture = family.architectures.front();
    c.vocab_size = f.integer("vocab_size", d.vocab_size, 1, 1 << 24);
    c.width = f.integer("hidden_size", d.hidden_size, 1, 1 << 16);
    c.mlp_width = f.integer("intermediate_size", d.intermediate_size, 1, 1 << 20);
    c.n_layers = f.integer("num_hidden_layers", d.num_hidden_layers, 1, 1024);
    c.n_heads = f.integer("num_attention_heads", d.num_attention_heads, 1, 1 << 12);
    c.n_kv_heads =
        f.integer("num_key_value_heads", d.num_key_value_heads > 0 ? d.num_key_value_heads : c.n_heads, 1, 1 << 12);
    if (c.n_heads % c.n_kv_heads != 0) {
        f.fail("num_key_value_heads", std::to_string(c.n_kv_heads) + " does not divide num_attention_heads = " +
                                          std::to_string(c.n_heads) + " (each key/value head serves a whole group)");
    }
    if (f.find("head_dim") == nullptr && d.head_dim == 0) {
        check_hf_head_split(f.file(), c.width, "hidden_size", c.n_heads, "num_attention_heads");
    }
    c.head_width = f.integer("head_dim", d.head_dim > 0 ? d.head_dim : c.width / c.n_heads, 2, 1 << 12);
    c.max_tokens = f.integer("max_position_embeddings", d.max_position_embeddings, 1, 1 << 24);
    c.max_tokens_field = "max_position_embeddings";
    c.norm_eps = read_hf_epsilon(f, "rms_norm_eps", static_cast<float>(d.rms_norm_eps));
    c.activation = read_hf_activation(f, f.string("hidden_act", d.hidden_act));
    c.tied_head = f.boolean("tie_word_embeddings", d.tie_word_embeddings);
    // transformers turns int(head_dim * partial_rotary_factor) features of each head.
    const double partial = f.number("partial_rotary_factor", 1.0);
    const auto rotated = static_cast<Eigen::Index>(static_cast<double>(c.head_width) * partial);
    if (!(partial > 0 && partial <= 1) || rotated < 2 || rotated % 2 != 0) {
        f.fail("partial_rotary_factor", "a number in (0, 1] that turns an even number of each head's " +
                                            std::to_string(c.head_width) + " features, got " + hf_number_text(partial));
    }
    const Rotary rotary = read_rotary(f, d.rope_theta, rotated, c.max_tokens);
    c.layers.assign(static_cast<std::size_t>(c.n_layers), DecoderLayer{0, rotary});
    // Dynamic NTK exists to run past the trained length.
    if (rotary.scaling.type == Type::dynamic) {
        const double longest = std::ceil(rotary.scaling.factor * static_cast<double>(c.max_tokens));
        c.max_tokens = static_cast<Eigen::Index>(std::min(longest, static_cast<double>(1 << 24)));
    }
    return c;
}

std::vector<bool> read_layer_types(const HfFields& f, Eigen::Index n_layers,
                                   const std::function<bool(Eigen::Index)>& is_sliding) {
    std::vector<bool> sliding;
    const json* types = f.find("layer_types");
    if (types == nullptr) {
        for (Eigen::Index l = 0; l < n_layers; ++l) sliding.push_back(is_sliding(l));
        return sliding;
    }
    if (!types->is_array() || static_cast<Eigen::Index>(types->size()) != n_layers) {
        f.fail("layer_types", "a list of " + std::to_string(n_layers) + " layer types (num_hidden_layers)", *types);
    }
    for (const json& t : *types) {
        if (!t.is_string() || (t != "sliding_attention" && t != "full_attention")) {
            f.fail("layer_types", "\"sliding_attention\" or \"full_attention\" for each layer", t);
        }
        sliding.push_back(t == "sliding_attention");
    }
    return sliding;
}

Eigen::Index read_window(const HfFields& f, const std::string& field, Eigen::Index fallback) {
    if (!f.written(field)) return fallback;
    return f.integer(field, 0, 1, 1 << 30);   // null: no window
}

void refuse_unless(const HfFields& f, const std::string& field, const json& allowed, const std::string& why) {
    const json* v = f.find(field);
    if (v != nullptr && *v != allowed) f.fail(field, hf_brief(*v) + " is not supported (" + why + ")");
}

std::string describe_layers(const std::vector<DecoderLayer>& layers) {
    std::map<Eigen::Index, std::string> by_window;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        std::string& list = by_window[layers[l].window];
        list += (list.empty() ? "" : ", ") + std::to_string(l);
    }
    std::string out;
    for (const auto& [window, list] : by_window) {
        if (!out.empty()) out += "; ";
        out += (window > 0 ? "local W=" + std::to_string(window) : std::string("global")) + " (layers " + list + ")";
    }
    return out;
}

std::string describe_rotary(const Rotary& rotary, Eigen::Index head_width) {
    if (!rotary.active()) return "none (learned positions)";
    const RopeScaling& s = rotary.scaling;
    std::string out = s.type_name() + ", base " + hf_number_text(rotary.theta);
    const Eigen::Index r = rotary.rotary_width > 0 ? rotary.rotary_width : head_width;
    if (r != head_width) out += ", " + std::to_string(r) + " of " + std::to_string(head_width) + " features";
    if (s.type != Type::none && s.type != Type::longrope) out += ", factor " + hf_number_text(s.factor);
    if (s.original_max_positions > 0) out += ", original " + std::to_string(s.original_max_positions) + " positions";
    if (rotary.layout == RotaryLayout::interleaved) out += ", interleaved pairs";
    return out;
}

}   // namespace headscope
