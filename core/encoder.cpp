#include "core/encoder.h"

#include "core/error.h"

#include <string>

namespace headscope {

void check_disabled_heads(const ModelInfo& info, const std::vector<std::vector<bool>>& disabled) {
    if (disabled.empty()) return;
    if (static_cast<Eigen::Index>(disabled.size()) != info.n_layers) {
        throw Error("disabled heads: expected flags for " + std::to_string(info.n_layers) + " layers, got " +
                    std::to_string(disabled.size()));
    }
    for (const auto& layer : disabled) {
        if (!layer.empty() && static_cast<Eigen::Index>(layer.size()) != info.n_heads) {
            throw Error("disabled heads: expected " + std::to_string(info.n_heads) + " flags per layer, got " +
                        std::to_string(layer.size()));
        }
    }
}

ModelTrace encoder_forward(const ModelInfo& info, const EncoderStack& stack, Matrix x, const OptionalMask& mask,
                           const RunOptions& options) {
    ModelTrace trace;
    trace.mask = mask;
    trace.layers.reserve(stack.blocks.size());
    AttentionOptions attention_options;
    attention_options.keep = mask;
    for (auto l = static_cast<std::size_t>(resume_layers(info, options, trace, x)); l < stack.blocks.size(); ++l) {
        const EncoderBlock& block = stack.blocks[l];
        note_layer_input(options, trace, x);
        set_layer_options(options, l, attention_options);
        trace.layers.push_back(attention_forward(block.attn, layer_norm_forward(block.ln1, x), attention_options));
        x += trace.layers.back().output;
        x += mlp_forward(block.mlp, layer_norm_forward(block.ln2, x));
    }
    trace.hidden = layer_norm_forward(stack.final_norm, x);
    return trace;
}

OwnedTensor owned_tensor(std::string name, const Matrix& m) {
    return {std::move(name), {m.rows(), m.cols()}, std::vector<float>(m.data(), m.data() + m.size())};
}

OwnedTensor owned_tensor(std::string name, const Vector& v) {
    return {std::move(name), {v.size()}, std::vector<float>(v.data(), v.data() + v.size())};
}

namespace {

void export_linear(const std::string& prefix, const Linear& layer, std::vector<OwnedTensor>& out) {
    out.push_back(owned_tensor(prefix + ".weight", layer.weight.to_matrix()));
    if (layer.bias.size() != 0) out.push_back(owned_tensor(prefix + ".bias", layer.bias));
}

void export_norm(const std::string& prefix, const LayerNorm& norm, std::vector<OwnedTensor>& out) {
    out.push_back(owned_tensor(prefix + ".weight", norm.weight));
    out.push_back(owned_tensor(prefix + ".bias", norm.bias));
}

std::int64_t linear_count(const Linear& layer) { return layer.weight.size() + layer.bias.size(); }

}   // namespace

void export_encoder(const EncoderStack& stack, std::vector<OwnedTensor>& out) {
    for (std::size_t l = 0; l < stack.blocks.size(); ++l) {
        const EncoderBlock& b = stack.blocks[l];
        const std::string prefix = "layers." + std::to_string(l);
        export_norm(prefix + ".ln1", b.ln1, out);
        export_linear(prefix + ".attn.q_proj", b.attn.q, out);
        export_linear(prefix + ".attn.k_proj", b.attn.k, out);
        export_linear(prefix + ".attn.v_proj", b.attn.v, out);
        export_linear(prefix + ".attn.out_proj", b.attn.out, out);
        export_norm(prefix + ".ln2", b.ln2, out);
        export_linear(prefix + ".mlp.fc1", b.mlp.fc1, out);
        export_linear(prefix + ".mlp.fc2", b.mlp.fc2, out);
    }
    export_norm("ln_final", stack.final_norm, out);
}

std::int64_t encoder_parameter_count(const EncoderStack& stack) {
    std::int64_t n = stack.final_norm.weight.size() + stack.final_norm.bias.size();
    for (const EncoderBlock& b : stack.blocks) {
        n += b.ln1.weight.size() + b.ln1.bias.size() + b.ln2.weight.size() + b.ln2.bias.size();
        n += linear_count(b.attn.q) + linear_count(b.attn.k) + linear_count(b.attn.v) + linear_count(b.attn.out);
        n += linear_count(b.mlp.fc1) + linear_count(b.mlp.fc2);
    }
    return n;
}

}   // namespace headscope
