#include "core/models/hf/encoder.h"

#include "core/base/error.h"
#include "core/models/hf/checkpoint_load.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"

#include <set>
#include <utility>

namespace headscope {

namespace {

// One layer's tensors, in the order the computation reads them.
template <typename BlockT, typename LinearT, typename Binder>
void bind_layer(BlockT& block, LinearT& packed_mlp, const EncoderConfig& c, const EncoderTensorNames& n,
                const std::string& at, const StackShapeReasons& why, Binder& b) {
    const Eigen::Index E = c.width;
    const Eigen::Index I = c.mlp_width;
    const bool pre = c.norm_placement == NormPlacement::pre;
    if (pre) bind_norm(b, at + n.attention_norm, block.attention_norm, E, why.e);
    bind_linear(b, at + n.q, block.attention.q, E, E, why.e, c.qkv_bias);
    bind_linear(b, at + n.k, block.attention.k, E, E, why.e, c.qkv_bias);
    bind_linear(b, at + n.v, block.attention.v, E, E, why.e, c.qkv_bias);
    bind_linear(b, at + n.out, block.attention.out, E, E, why.e);
    if (c.layer_scale) b.vector(at + n.attention_scale, block.attention_output_scale, E, why.e);
    if (!pre) bind_norm(b, at + n.attention_norm, block.attention_norm, E, why.e);
    if (pre) bind_norm(b, at + n.mlp_norm, block.mlp_norm, E, why.e);
    if (c.gated_mlp) {
        bind_linear(b, at + n.packed_gate_up, packed_mlp, 2 * I, E, why.mlp + " (gate and up)");
        bind_linear(b, at + n.gated_down, block.mlp.down, E, I, why.mlp);
    } else {
        bind_linear(b, at + n.up, block.mlp.up, I, E, why.mlp);
        bind_linear(b, at + n.down, block.mlp.down, E, I, why.mlp);
    }
    if (c.layer_scale) b.vector(at + n.mlp_scale, block.mlp_output_scale, E, why.e);
    if (!pre) bind_norm(b, at + n.mlp_norm, block.mlp_norm, E, why.e);
}

// Every tensor of an encoder checkpoint, once: loading, export and the parameter count.
// Weights and Ends are const for export and counting.
template <typename Weights, typename Ends, typename Binder>
void bind_tensors(Weights& w, Ends& ends, const EncoderConfig& c, const EncoderTensorNames& n, Binder& b) {
    const StackShapeReasons why("hidden_size", c.width, c.mlp_field, c.mlp_width);
    ends.bind(EncoderPart::inputs, c, why, b);
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        bind_layer(w.stack.blocks[l], w.packed_mlp[l], c, n, n.layers + std::to_string(l) + ".", why, b);
    }
    if (!n.final_norm.empty()) bind_norm(b, n.final_norm, w.final_norm, c.width, why.e);
    ends.bind(EncoderPart::head, c, why, b);
}

// The blocks laid out from the config, before their weights are bound: LayerNorms of the
// config's epsilon where it says, bidirectional.
EncoderWeights layout_weights(const EncoderConfig& c) {
    EncoderWeights w;
    w.stack = layer_norm_stack({c.norm_placement, Residual::sequential, c.causal}, c.n_layers, c.n_heads, c.norm_eps,
                               c.activation);
    w.stack.max_tokens = c.max_run_tokens;
    w.packed_mlp.resize(static_cast<std::size_t>(c.n_layers));
    w.final_norm.eps = c.norm_eps;
    return w;
}

// After binding: a gated MLP's gate and up as views of their one tensor.
void finish_layers(EncoderWeights& w, const EncoderConfig& c) {
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        Block& block = w.stack.blocks[l];
        if (c.gated_mlp) {
            block.mlp.gate = linear_rows(w.packed_mlp[l], 0, c.mlp_width);
            block.mlp.up = linear_rows(w.packed_mlp[l], c.mlp_width, c.mlp_width);
            block.mlp.activation = Activation::silu;
        }
        block.attention.validate();
    }
}

}   // namespace

void read_encoder_basics(const HfFields& f, EncoderConfig& c) {
    c.width = f.integer("hidden_size", 768, 1, 65536);
    c.n_layers = f.integer("num_hidden_layers", 12, 1, 1024);
    c.n_heads = f.integer("num_attention_heads", 12, 1, 65536);
    c.mlp_width = f.integer("intermediate_size", 3072, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", "gelu");
    c.activation = read_hf_activation(f, c.hidden_act);
}

ModelInput EncoderEnds::encode_text(std::string_view, const std::string& model) const {
    throw Error(model + " takes no text");
}

ModelInput EncoderEnds::encode_ids(std::span<const std::int64_t>, const std::string& model) const {
    throw Error(model + " takes no token ids");
}

ModelInput EncoderEnds::encode_image(const RgbImage&, const ImageOptions&, const std::string& model) const {
    throw Error(model + " takes no images");
}

std::string EncoderEnds::class_name(const std::vector<std::string>& id2label, Eigen::Index index) {
    const auto i = static_cast<std::size_t>(index);
    return index >= 0 && i < id2label.size() ? id2label[i] : std::to_string(index);
}

HfEncoderModel::HfEncoderModel(const EncoderFamily& family, const std::string& folder, const LoadControl& control)
    : family_(family) {
    EncoderSetup setup = read_hf_config(folder, [&](const HfFields& f) { return family.read_config(f, folder); });
    config_ = std::move(setup.config);
    ends_ = std::move(setup.ends);
    HfCheckpointWeights checkpoint(folder, config_.model_type + ".", control);
    bind_from(checkpoint, folder);
    const EncoderTensorNames& n = family.names;
    checkpoint.table.check_all_taken(std::set<std::string>(n.ignorable.begin(), n.ignorable.end()),
                                     ends_->architecture(config_));
    ends_->read_files(folder);
    describe(folder, checkpoint.table, checkpoint.stored);
}

HfEncoderModel::HfEncoderModel(const EncoderFamily& family, EncoderSetup setup, HfCheckpointWeights& checkpoint,
                               const std::string& folder)
    : family_(family), config_(std::move(setup.config)), ends_(std::move(setup.ends)) {
    bind_from(checkpoint, folder);
    ends_->read_files(folder);
    describe(folder, checkpoint.table, checkpoint.stored);
}

void HfEncoderModel::bind_from(HfCheckpointWeights& checkpoint, const std::string& folder) {
    const EncoderConfig& c = config_;
    mapped_ = checkpoint.mapped;
    ends_->choose_head(c, checkpoint.table);
    weights_ = layout_weights(c);
    HfTensorLoader loader(checkpoint.table);
    bind_tensors(weights_, *ends_, c, family_.names, loader);
    finish_layers(weights_, c);
    ends_->finish_weights(c, checkpoint.table, folder);
}

void HfEncoderModel::describe(const std::string& folder, const HfTensorTable& table, const HfWeights& stored) {
    const EncoderConfig& c = config_;
    const std::string architecture = ends_->architecture(c);
    const std::string ends = ends_->describe(info_, c);
    info_.name = folder;
    info_.description = "Hugging Face " + architecture + " (" + c.model_type + ": E=" + std::to_string(c.width) +
                        " H=" + std::to_string(c.n_heads) + " L=" + std::to_string(c.n_layers) + ends +
                        (info_.classifier ? ", " + std::to_string(c.id2label.size()) + " labels" : "") + ")";
    info_.n_layers = c.n_layers;
    info_.n_heads = c.n_heads;
    info_.width = c.width;
    info_.head_width = c.width / c.n_heads;
    info_.mlp_width = c.mlp_width;
    info_.max_tokens = c.max_tokens;
    info_.causal = weights_.stack.spec.causal;
    info_.n_parameters = count_bound(
        [&](auto& b) { bind_tensors(std::as_const(weights_), std::as_const(*ends_), c, family_.names, b); });
    info_.warnings = table.warnings();
    info_.settings.insert({
        {"model_type", c.model_type},
        {"architecture", architecture},
        {"hidden_act", c.hidden_act},
        {"layer_norm_eps", hf_number_text(c.norm_eps)},
        {"weights", stored.description()},
    });
}

ModelInput HfEncoderModel::encode_text(std::string_view text) const {
    if (!info_.takes_text) return Model::encode_text(text);
    mapped_.check();
    return ends_->encode_text(text, info_.name);
}

ModelInput HfEncoderModel::encode_ids(std::span<const std::int64_t> ids) const {
    if (!info_.takes_text) return Model::encode_ids(ids);
    mapped_.check();
    return ends_->encode_ids(ids, info_.name);
}

ModelInput HfEncoderModel::encode_image(const RgbImage& image, const ImageOptions& options) const {
    if (!info_.takes_image) return Model::encode_image(image, options);
    mapped_.check();
    return ends_->encode_image(image, options, info_.name);
}

ModelTrace HfEncoderModel::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    options.disabled_heads.check_fits(info_.n_layers, info_.n_heads);
    ends_->check_input(input, info_);
    // The last layer's MLP runs for the rows the head reads alone: the others feed no map
    // and no logit (5% of ViT-B/16's products).
    const Eigen::Index read_rows = ends_->rows_read(input.embeddings.rows());
    // A kept prefix is a decoder's saving (text typed at the end, causal). An encoder's
    // head reads its first rows ([CLS]) and its output is every row, which a reused prefix
    // would leave out: with the causal mask on and two inputs that begin alike (two
    // pictures with the same top-left patches), it read past the rows computed. It runs whole.
    RunOptions whole = options;
    whole.prefix_from = nullptr;
    whole.prefix_rows = 0;
    StackRun run = run_blocks(info_.name, weights_.stack, input.embeddings, whole, read_rows);
    ModelTrace trace = std::move(run.trace);
    if (read_rows < 0 || read_rows >= run.x.rows()) trace.output_norms = run.x.rowwise().norm();
    Matrix x = read_rows < 0 ? std::move(run.x) : Matrix(run.x.topRows(read_rows));   // [rows read, E]
    trace.hidden = family_.names.final_norm.empty() ? std::move(x) : norm_forward(weights_.final_norm, x);
    trace.logits = ends_->logits(trace.hidden, config_);
    return trace;
}

std::string HfEncoderModel::output_label(Eigen::Index index) const { return ends_->output_label(index); }

std::vector<OwnedTensor> HfEncoderModel::export_weights() const {
    return export_bound([&](auto& b) { bind_tensors(weights_, *ends_, config_, family_.names, b); });
}

std::unique_ptr<Model> load_hf_encoder(const EncoderFamily& family, const std::string& folder,
                                       const LoadControl& control) {
    return std::make_unique<HfEncoderModel>(family, folder, control);
}

}   // namespace headscope
