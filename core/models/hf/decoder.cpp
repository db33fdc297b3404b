#include "core/models/hf/decoder.h"

#include "core/base/error.h"
#include "core/models/hf/checkpoint_load.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"
#include "core/tensor/memory_reuse.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <utility>

namespace headscope {

namespace {

// Why each tensor has its shape, for the loader's messages: the stack's (E, the MLP) and the decoder's own.
struct ShapeReasons : StackShapeReasons {
    std::string v, attention, kv, head;
    explicit ShapeReasons(const DecoderConfig& c)
        : StackShapeReasons(c.width_field, c.width, c.mlp_field, c.mlp_width),
          v("config.json: " + hf_field_is("vocab_size", c.vocab_size) + ", " + hf_field_is(c.width_field, c.width)),
          attention(c.n_heads * c.head_width == c.width ? e
                                                        : e + ", " + hf_field_is("num_attention_heads", c.n_heads) +
                                                              " x " + hf_field_is("head_dim", c.head_width)),
          kv(c.n_kv_heads == c.n_heads ? attention
                                       : attention + ", " + hf_field_is("num_key_value_heads", c.n_kv_heads)),
          head("config.json: " + hf_field_is("head_dim", c.head_width)) {}
};

// GPT-NeoX's query_key_value rows hold head h's q, k and v together ([H, 3, Dh]); the
// model holds every q row, then every k row, then every v row.
RowOrder per_head_order(Eigen::Index H, Eigen::Index Dh) {
    RowOrder order(static_cast<std::size_t>(3 * H * Dh));
    for (Eigen::Index part = 0; part < 3; ++part) {
        for (Eigen::Index h = 0; h < H; ++h) {
            for (Eigen::Index i = 0; i < Dh; ++i) {
                order[static_cast<std::size_t>(part * H * Dh + h * Dh + i)] = h * 3 * Dh + part * Dh + i;
            }
        }
    }
    return order;
}

template <typename AttentionT, typename Binder>
void bind_attention(AttentionT& a, const DecoderConfig& c, const DecoderTensorNames& n, const std::string& at,
                    const ShapeReasons& why, Binder& b) {
    const Eigen::Index E = c.width;
    const Eigen::Index D = c.n_heads * c.head_width;
    const Eigen::Index Dkv = c.n_kv_heads * c.head_width;
    switch (n.qkv) {
    case QkvLayout::separate:
        bind_linear(b, at + n.q, a.q, D, E, why.attention, c.qkv_bias);
        bind_linear(b, at + n.k, a.k, Dkv, E, why.kv, c.qkv_bias);
        bind_linear(b, at + n.v, a.v, Dkv, E, why.kv, c.qkv_bias);
        break;
    case QkvLayout::packed: bind_linear(b, at + n.packed_qkv, a.qkv, D + 2 * Dkv, E, why.kv, c.qkv_bias); break;
    case QkvLayout::packed_per_head: {
        const RowOrder order = per_head_order(c.n_heads, c.head_width);
        b.permuted_weight(at + n.packed_qkv + ".weight", a.qkv.weight, 3 * D, E, why.attention, order);
        if (c.qkv_bias) b.permuted_vector(at + n.packed_qkv + ".bias", a.qkv.bias, 3 * D, why.attention, order);
        break;
    }
    case QkvLayout::conv1d: bind_conv1d(b, at + n.packed_qkv, a.qkv, E, 3 * D, why.attention); break;
    }
    if (n.qkv == QkvLayout::conv1d) {
        bind_conv1d(b, at + n.out, a.out, D, E, why.attention);
    } else {
        bind_linear(b, at + n.out, a.out, E, D, why.attention, c.out_bias);
    }
    if (c.qk_norm) {
        bind_norm(b, at + n.q_norm, a.q_norm, c.head_width, why.head);
        bind_norm(b, at + n.k_norm, a.k_norm, c.head_width, why.head);
    }
}

template <typename MlpT, typename PackedT, typename Binder>
void bind_mlp(MlpT& mlp, PackedT& packed, const DecoderConfig& c, const DecoderTensorNames& n, const std::string& at,
              const ShapeReasons& why, Binder& b) {
    const Eigen::Index E = c.width;
    const Eigen::Index I = c.mlp_width;
    switch (n.mlp) {
    case MlpLayout::separate:
        if (c.gated_mlp) bind_linear(b, at + n.gate, mlp.gate, I, E, why.mlp, c.mlp_bias);
        bind_linear(b, at + n.up, mlp.up, I, E, why.mlp, c.mlp_bias);
        bind_linear(b, at + n.down, mlp.down, E, I, why.mlp, c.mlp_bias);
        break;
    case MlpLayout::packed:
        bind_linear(b, at + n.up, packed, 2 * I, E, why.mlp + " (gate and up)", c.mlp_bias);
        bind_linear(b, at + n.down, mlp.down, E, I, why.mlp, c.mlp_bias);
        break;
    case MlpLayout::conv1d:
        bind_conv1d(b, at + n.up, mlp.up, E, I, why.mlp);
        bind_conv1d(b, at + n.down, mlp.down, I, E, why.mlp);
        break;
    }
}

// Every tensor of a decoder checkpoint, once: loading, export and the parameter count.
template <typename Weights, typename Binder>
void bind_tensors(Weights& w, const DecoderConfig& c, const DecoderTensorNames& n, Binder& b) {
    const ShapeReasons why(c);
    const Eigen::Index E = c.width;
    b.weight(n.embed + ".weight", w.embed, c.vocab_size, E, why.v);
    if (!n.positions.empty()) {
        b.weight(n.positions + ".weight", w.positions, c.learned_positions, E,
                 "config.json: " + hf_field_is(c.max_tokens_field, c.learned_positions) + ", " +
                     hf_field_is("hidden_size", E));
    }
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        auto& block = w.stack.blocks[l];
        const std::string at = n.layers + std::to_string(l) + ".";
        bind_norm(b, at + n.attention_norm, block.attention_norm, E, why.e, c.norm_bias);
        bind_attention(block.attention, c, n, at, why, b);
        if (c.output_norms) bind_norm(b, at + n.attention_output_norm, block.attention_output_norm, E, why.e);
        bind_norm(b, at + n.mlp_norm, block.mlp_norm, E, why.e, c.norm_bias);
        bind_mlp(block.mlp, w.packed_mlp[l], c, n, at, why, b);
        if (c.output_norms) bind_norm(b, at + n.mlp_output_norm, block.mlp_output_norm, E, why.e);
    }
    bind_norm(b, n.final_norm, w.final_norm, E, why.e, c.norm_bias);
    // A tied head may be stored anyway (GPT2LMHeadModel saves lm_head.weight): it is read
    // and checked, then dropped (HfDecoderModel's constructor).
    if (!c.tied_head || b.present(n.head + ".weight", w.head.size() != 0)) {
        b.weight(n.head + ".weight", w.head, c.vocab_size, E,
                 why.v + (c.tied_head ? " (the LM head, tied to " + n.embed + ")" : " (the LM head)"));
    }
}

// The blocks laid out from the config, before their weights are bound.
Stack layout_stack(const DecoderConfig& c) {
    Norm norm;
    norm.kind = c.norm_kind;
    norm.eps = c.norm_eps;
    Block block;
    block.attention_norm = block.mlp_norm = norm;
    block.attention_output_norm = block.mlp_output_norm = norm;
    block.attention.n_heads = c.n_heads;
    block.attention.n_kv_heads = c.n_kv_heads;
    block.attention.score_scale = c.score_scale;
    block.attention.score_cap = c.score_cap;
    Norm head_norm = norm;
    head_norm.kind = c.norm_kind == NormKind::layer_norm ? NormKind::rms_norm : c.norm_kind;
    block.attention.q_norm = block.attention.k_norm = head_norm;
    block.mlp.activation = c.activation;
    Stack stack;
    stack.spec = {.norm_placement = NormPlacement::pre, .residual = c.residual, .causal = true};
    stack.max_tokens = c.max_tokens;
    for (const DecoderLayer& layer : c.layers) {
        block.window = layer.window;
        block.attention.rotary = layer.rotary;
        stack.blocks.push_back(block);
    }
    return stack;
}

// After binding: packed q/k/v and gate/up as views of their one tensor, and what the
// config leaves out of the blocks (norms a family lacks) emptied.
void finish_layers(DecoderWeights& w, const DecoderConfig& c, const DecoderTensorNames& n) {
    const Eigen::Index D = c.n_heads * c.head_width;
    const Eigen::Index Dkv = c.n_kv_heads * c.head_width;
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        Block& block = w.stack.blocks[l];
        AttentionWeights& a = block.attention;
        if (n.qkv != QkvLayout::separate) {
            a.q = linear_rows(a.qkv, 0, D);
            a.k = linear_rows(a.qkv, D, Dkv);
            a.v = linear_rows(a.qkv, D + Dkv, Dkv);
        }
        if (!c.qk_norm) a.q_norm = a.k_norm = Norm{};
        if (!c.output_norms) block.attention_output_norm = block.mlp_output_norm = Norm{};
        if (n.mlp == MlpLayout::packed) {
            block.mlp.gate = linear_rows(w.packed_mlp[l], 0, c.mlp_width);
            block.mlp.up = linear_rows(w.packed_mlp[l], c.mlp_width, c.mlp_width);
        }
        a.validate();
    }
}

std::string number(double value) { return hf_number_text(value); }

}   // namespace

HfDecoderModel::HfDecoderModel(const DecoderFamily& family, const std::string& folder, const LoadControl& control)
    : family_(family), config_(read_hf_config(folder, family.read_config)) {
    const DecoderConfig& c = config_;
    const DecoderTensorNames& n = family.names;
    HfCheckpointWeights checkpoint(folder, n.prefix, control);
    mapped_ = checkpoint.mapped;
    HfTensorLoader loader(checkpoint.table);
    weights_.stack = layout_stack(c);
    weights_.packed_mlp.resize(static_cast<std::size_t>(c.n_layers));
    weights_.final_norm.kind = c.norm_kind;
    weights_.final_norm.eps = c.norm_eps;
    bind_tensors(weights_, c, n, loader);
    finish_layers(weights_, c, n);
    std::set<std::string> ignorable;
    for (Eigen::Index l = 0; l < c.n_layers; ++l) {
        for (const std::string& buffer : n.ignorable_per_layer) {
            ignorable.insert(n.layers + std::to_string(l) + "." + buffer);
        }
    }
    checkpoint.table.check_all_taken(ignorable, c.architecture);
    tokens_ = std::make_unique<HfTextTokens>(folder);
    std::string head = c.tied_head ? "tied to " + n.embed : n.head + ".weight";
    std::string head_warning;
    if (c.tied_head && weights_.head.size() != 0) {
        // transformers ties a stored head over with the embedding: one parameter set.
        if (weights_.head == weights_.embed) {
            head += " (" + n.head + ".weight equals it)";
        } else {
            head_warning = n.head + ".weight differs from " + n.embed +
                           ".weight, but tie_word_embeddings ties them: the embedding is the head, as in transformers";
        }
        weights_.head = WeightMatrix();
    }
    describe(folder, head, checkpoint.table, checkpoint.stored);
    if (!head_warning.empty()) info_.warnings.push_back(head_warning);
}

void HfDecoderModel::describe(const std::string& folder, const std::string& head, const HfTensorTable& table,
                              const HfWeights& stored) {
    const DecoderConfig& c = config_;
    info_.name = folder;
    info_.description = "Hugging Face " + c.architecture + " (" + c.model_type + ": E=" + std::to_string(c.width) +
                        " H=" + std::to_string(c.n_heads) + " Hkv=" + std::to_string(c.n_kv_heads) +
                        " L=" + std::to_string(c.n_layers) + ", V=" + std::to_string(c.vocab_size) + ")";
    info_.n_layers = c.n_layers;
    info_.n_heads = c.n_heads;
    info_.n_kv_heads = c.n_kv_heads;
    info_.width = c.width;
    info_.head_width = c.head_width;
    info_.mlp_width = c.mlp_width;
    info_.max_tokens = c.max_tokens;
    info_.takes_text = true;
    info_.reads_ids_only = !tokens_->has_tokenizer();
    info_.causal = true;
    info_.reuses_prefix = stack_reuses_prefix(weights_.stack);
    info_.n_outputs = c.vocab_size;
    info_.n_parameters = count_bound([&](auto& b) { bind_tensors(std::as_const(weights_), c, family_.names, b); });
    info_.warnings = table.warnings();
    for (const DecoderLayer& layer : c.layers) info_.layer_windows.push_back(layer.window);
    info_.settings = {
        {"model_type", c.model_type},
        {"architecture", c.architecture},
        {"heads", std::to_string(c.n_heads) + " query, " + std::to_string(c.n_kv_heads) + " key/value (" +
                      std::to_string(c.n_heads / c.n_kv_heads) + " per group)"},
        {"head_width", std::to_string(c.head_width)},
        {"vocab_size", std::to_string(c.vocab_size)},
        {"max_tokens", std::to_string(c.max_tokens) + " (" + c.max_tokens_field + ")"},
        {"norm", std::string(c.norm_kind == NormKind::layer_norm ? "LayerNorm"
                             : c.norm_kind == NormKind::rms_norm ? "RMSNorm"
                                                                 : "RMSNorm (1 + w)") +
                     ", eps " + number(c.norm_eps) + (c.output_norms ? ", before and after each sublayer" : "")},
        {"residual",
         c.residual == Residual::parallel ? "parallel (attention and MLP read the same stream)" : "sequential"},
        {"score_scale", c.score_scale != 0 ? number(c.score_scale) : "1/sqrt(head_width)"},
        {"lm_head", head},
        {"tokenizer", tokens_->files()},
        {"weights", stored.description()},
    };
    if (c.score_cap != 0) info_.settings.emplace("score_cap", number(c.score_cap));
    if (c.logit_cap != 0) info_.settings.emplace("logit_cap", number(c.logit_cap));
    if (c.embedding_scale != 1.0f) info_.settings.emplace("embedding_scale", number(c.embedding_scale));
    for (const auto& [key, value] : c.settings) info_.settings[key] = value;
}

ModelInput HfDecoderModel::embed(std::vector<std::int64_t> ids, const ModelInput& before) const {
    mapped_.check();
    const auto T = static_cast<Eigen::Index>(ids.size());
    Eigen::Index kept = 0;   // positions whose rows `before` holds
    if (before.embeddings.cols() == info_.width &&
        static_cast<Eigen::Index>(before.ids.size()) == before.embeddings.rows()) {
        const auto most = std::min(T, before.embeddings.rows());
        while (kept < most && ids[static_cast<std::size_t>(kept)] == before.ids[static_cast<std::size_t>(kept)]) ++kept;
    }
    Matrix looked_up = weights_.embed.gather_rows(std::span(ids).subspan(static_cast<std::size_t>(kept)));
    if (config_.embedding_scale != 1.0f) looked_up *= config_.embedding_scale;
    if (weights_.positions.size() != 0) {
        std::vector<std::int64_t> positions(static_cast<std::size_t>(T - kept));
        std::iota(positions.begin(), positions.end(), kept);
        looked_up += weights_.positions.gather_rows(positions);
    }
    ModelInput input;
    if (kept == 0) {
        input.embeddings = std::move(looked_up);   // [T, E]
    } else {
        input.embeddings.resize(T, info_.width);
        input.embeddings.topRows(kept) = before.embeddings.topRows(kept);
        input.embeddings.bottomRows(T - kept) = looked_up;
    }
    input.ids = std::move(ids);
    return input;
}

ModelInput HfDecoderModel::encode_text(std::string_view text) const { return encode_text_after(text, ModelInput{}); }

ModelInput HfDecoderModel::encode_text_after(std::string_view text, const ModelInput& before) const {
    ModelInput tokens =
        tokens_->encode(text, config_.max_tokens, config_.vocab_size, info_.name, config_.max_tokens_field);
    ModelInput input = embed(std::move(tokens.ids), before);
    input.labels = std::move(tokens.labels);
    input.spans = std::move(tokens.spans);
    return input;
}

ModelInput HfDecoderModel::encode_ids(std::span<const std::int64_t> ids) const {
    return encode_ids_after(ids, ModelInput{});
}

ModelInput HfDecoderModel::encode_ids_after(std::span<const std::int64_t> ids, const ModelInput& before) const {
    hf_check_token_ids(ids, config_.vocab_size, config_.max_tokens, info_.name, config_.max_tokens_field);
    ModelInput input = embed(std::vector<std::int64_t>(ids.begin(), ids.end()), before);
    input.labels = tokens_->labels(ids);
    return input;
}

ModelTrace HfDecoderModel::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    // Every row's logits are joined from the kept run's: it must hold one per position.
    const ModelTrace* kept = options.prefix_from;
    if (kept != nullptr && options.last_logit_rows < 0 && kept->logits.rows() != kept->hidden.rows()) {
        throw Error(info_.name + ": cannot reuse the unchanged start of the input: the kept run kept the logits of " +
                    std::to_string(kept->logits.rows()) + " of its " + std::to_string(kept->hidden.rows()) +
                    " positions (RunOptions::last_logit_rows), and this run asks for every row");
    }
    StackRun run = run_blocks(info_.name, weights_.stack, input.embeddings, options);
    run.trace.hidden = run.joined(&ModelTrace::hidden, norm_forward(weights_.final_norm, run.x));
    if (options.last_logit_rows >= 0) {
        const Eigen::Index rows = std::min(options.last_logit_rows, run.trace.hidden.rows());
        run.trace.logits = lm_logits(run.trace.hidden.bottomRows(rows), !options.other_logit_rows_follow);
    } else {
        // The LM head for the computed rows only (a reused prefix keeps its logits).
        run.trace.logits = run.joined(&ModelTrace::logits, lm_logits(run.trace.hidden.bottomRows(run.x.rows())));
    }
    return std::move(run.trace);
}

Matrix HfDecoderModel::logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const {
    const Eigen::Index T = trace.hidden.rows();
    if (first >= 0 && n > 0 && first + n <= T && first < T - trace.logits.rows()) {
        mapped_.check();
        return lm_logits(trace.hidden.middleRows(first, n));   // rows the run did not keep
    }
    return Model::logits_rows(trace, first, n);
}

Matrix HfDecoderModel::lm_logits(const Matrix& hidden, bool few_rows) const {
    const WeightMatrix& head = weights_.head.size() != 0 ? weights_.head : weights_.embed;   // [V, E]
    Matrix logits(hidden.rows(), head.rows());                                               // [T, V]
    if (hidden.rows() == 0) return logits;   // none asked for (RunOptions::last_logit_rows = 0)
    advise_huge_pages(logits.data(), static_cast<std::size_t>(logits.size()) * sizeof(float));
    if (few_rows) {
        head.multiply_streamed(hidden, logits);
    } else {
        head.multiply(hidden, logits);
    }
    if (config_.logit_cap != 0.0f) {
        const float cap = config_.logit_cap;
        logits = (cap * (logits.array() / cap).tanh()).matrix();
    }
    return logits;
}

std::string HfDecoderModel::output_label(Eigen::Index index) const { return tokens_->label(index); }

std::vector<OwnedTensor> HfDecoderModel::export_weights() const {
    return export_bound([&](auto& b) { bind_tensors(weights_, config_, family_.names, b); });
}

std::unique_ptr<Model> load_hf_decoder(const DecoderFamily& family, const std::string& folder,
                                       const LoadControl& control) {
    return std::make_unique<HfDecoderModel>(family, folder, control);
}

}   // namespace headscope
