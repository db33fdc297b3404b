#include "core/models/hf/seq2seq.h"

#include "core/base/error.h"
#include "core/base/memory_room.h"
#include "core/models/hf/checkpoint_load.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <utility>

namespace headscope {

namespace {

// Why each tensor has its shape, for the loader's messages.
struct ShapeReasons : StackShapeReasons {
    std::string v, attention, bias;
    explicit ShapeReasons(const Seq2SeqConfig& c)
        : StackShapeReasons(c.width_field, c.width, c.mlp_field, c.mlp_width),
          v("config.json: " + hf_field_is("vocab_size", c.vocab_size) + ", " + hf_field_is(c.width_field, c.width)),
          attention(c.n_heads * c.head_width == c.width
                        ? e
                        : e + ", " + hf_field_is(c.heads_field, c.n_heads) + " x " + hf_field_is("d_kv", c.head_width)),
          bias("config.json: " + hf_field_is("relative_attention_num_buckets", c.position_buckets) + ", " +
               hf_field_is(c.heads_field, c.n_heads)) {}
};

template <typename AttentionT, typename Binder>
void bind_attention(AttentionT& a, const Seq2SeqConfig& c, const AttentionNames& n, const std::string& at,
                    const ShapeReasons& why, Binder& b) {
    const Eigen::Index E = c.width;
    const Eigen::Index D = c.n_heads * c.head_width;
    bind_linear(b, at + n.q, a.q, D, E, why.attention, c.biases);
    bind_linear(b, at + n.k, a.k, D, E, why.attention, c.biases);
    bind_linear(b, at + n.v, a.v, D, E, why.attention, c.biases);
    bind_linear(b, at + n.out, a.out, E, D, why.attention, c.biases);
}

template <typename StackT, typename Binder>
void bind_stack(StackT& stack, const Seq2SeqConfig& c, const Seq2SeqStackNames& n, const ShapeReasons& why, Binder& b) {
    const Eigen::Index E = c.width;
    const Eigen::Index I = c.mlp_width;
    for (std::size_t l = 0; l < stack.blocks.size(); ++l) {
        auto& block = stack.blocks[l];
        const std::string at = n.stack + n.layers + std::to_string(l) + ".";
        bind_norm(b, at + n.self_norm, block.attention_norm, E, why.e, c.biases);
        bind_attention(block.attention, c, n.self, at, why, b);
        // T5 keeps the bias table in each stack's first layer; the others read it from there.
        if (l == 0 && !n.relative_bias.empty()) {
            b.matrix(at + n.relative_bias + ".weight", block.attention.position_bias.table, c.position_buckets,
                     c.n_heads, why.bias);
        }
        if (!n.cross_norm.empty()) {
            bind_norm(b, at + n.cross_norm, block.cross_attention_norm, E, why.e, c.biases);
            bind_attention(block.cross_attention, c, n.cross, at, why, b);
        }
        bind_norm(b, at + n.mlp_norm, block.mlp_norm, E, why.e, c.biases);
        if (c.gated_mlp) bind_linear(b, at + n.gate, block.mlp.gate, I, E, why.mlp, c.biases);
        bind_linear(b, at + n.up, block.mlp.up, I, E, why.mlp, c.biases);
        bind_linear(b, at + n.down, block.mlp.down, E, I, why.mlp, c.biases);
    }
}

// One stack's ends: its learned positions and embedding norm before the blocks, its final norm after.
template <typename Matrix_, typename Norm_, typename Binder>
void bind_stack_ends(Matrix_& positions, Norm_& embedding_norm, Norm_& final_norm, const Seq2SeqConfig& c,
                     const Seq2SeqStackNames& n, const ShapeReasons& why, Binder& b) {
    if (!n.positions.empty()) {
        b.weight(n.stack + n.positions + ".weight", positions, c.learned_positions, c.width,
                 "config.json: " + hf_field_is(c.max_tokens_field, c.max_tokens) + " + " +
                     std::to_string(c.position_offset) + ", " + hf_field_is(c.width_field, c.width));
    }
    if (!n.embedding_norm.empty()) bind_norm(b, n.stack + n.embedding_norm, embedding_norm, c.width, why.e, c.biases);
    if (!n.final_norm.empty()) bind_norm(b, n.stack + n.final_norm, final_norm, c.width, why.e, c.biases);
}

// Every tensor of an encoder-decoder checkpoint, once: loading, export and the parameter count.
template <typename Weights, typename Binder>
void bind_tensors(Weights& w, const Seq2SeqConfig& c, const Seq2SeqTensorNames& n, Binder& b) {
    const ShapeReasons why(c);
    const Eigen::Index E = c.width;
    b.weight(n.shared + ".weight", w.shared, c.vocab_size, E, why.v);
    // Tied copies some releases store too: read when present, checked equal after loading.
    for (auto [name, copy] :
         {std::pair{&n.encoder_embed, &w.encoder_embed}, std::pair{&n.decoder_embed, &w.decoder_embed}}) {
        if (!name->empty() && b.present(*name + ".weight", copy->size() != 0))
            b.weight(*name + ".weight", *copy, c.vocab_size, E, why.v + " (tied to " + n.shared + ")");
    }
    bind_stack_ends(w.encoder_positions, w.encoder_embedding_norm, w.encoder_final_norm, c, n.encoder, why, b);
    bind_stack(w.encoder, c, n.encoder, why, b);
    bind_stack_ends(w.decoder_positions, w.decoder_embedding_norm, w.decoder_final_norm, c, n.decoder, why, b);
    bind_stack(w.decoder, c, n.decoder, why, b);
    if (!c.tied_head || b.present(n.head + ".weight", w.head.size() != 0)) {
        b.weight(n.head + ".weight", w.head, c.vocab_size, E,
                 why.v + (c.tied_head ? " (the LM head, tied to " + n.shared + ")" : " (the LM head)"));
    }
    if (!n.logits_bias.empty() && b.present(n.logits_bias, w.logits_bias.size() != 0))
        b.matrix(n.logits_bias, w.logits_bias, 1, c.vocab_size,
                 "config.json: " + hf_field_is("vocab_size", c.vocab_size));
}

// A stack laid out from the config before its weights are bound.
Stack layout_stack(const Seq2SeqConfig& c, Eigen::Index n_layers, bool decoder) {
    Norm norm;
    norm.kind = c.norm_kind;
    norm.eps = c.norm_eps;
    Block block;
    block.attention_norm = block.mlp_norm = norm;
    block.attention.n_heads = c.n_heads;
    block.attention.score_scale = c.score_scale;
    block.attention.position_bias.bidirectional = !decoder;
    block.attention.position_bias.max_distance = c.position_max_distance;
    if (decoder) {
        block.cross_attention_norm = norm;
        block.cross_attention.n_heads = c.n_heads;
        block.cross_attention.score_scale = c.score_scale;
    }
    block.mlp.activation = c.activation;
    Stack stack;
    stack.spec = {.norm_placement = c.norm_placement, .residual = Residual::sequential, .causal = decoder};
    stack.max_tokens = c.max_tokens;
    stack.blocks.assign(static_cast<std::size_t>(n_layers), block);
    return stack;
}

// After binding: every layer reads its stack's first layer's bias table.
void share_position_bias(Stack& stack) {
    if (stack.blocks.empty()) return;
    const RelativePositionBias& first = stack.blocks.front().attention.position_bias;
    for (Block& block : stack.blocks) {
        block.attention.position_bias = first;
        block.attention.validate();
        if (block.has_cross_attention()) block.cross_attention.validate();
    }
}

Norm norm_of(const Seq2SeqConfig& c) {
    Norm norm;
    norm.kind = c.norm_kind;
    norm.eps = c.norm_eps;
    return norm;
}

std::string number(double value) { return hf_number_text(value); }

// The encoder's maps [Ls][H][Ts, Ts] and the cross-attention's [L][H][Tt, Ts] are kept whole
// (only the decoder's own may be streamed): refused before they are made when they would
// not fit, with the encoder's working memory.
void check_kept_maps_fit(const ModelInfo& info, Eigen::Index Ts, Eigen::Index Tt) {
    const double s = static_cast<double>(Ts);
    const double t = static_cast<double>(Tt);
    const double heads = static_cast<double>(info.n_heads);
    const double maps =
        heads * (static_cast<double>(info.encoder_layers) * s * s + static_cast<double>(info.n_layers) * t * s);
    const double working =
        2.0 * heads * s * s + s * (8.0 * static_cast<double>(info.width) + 2.0 * static_cast<double>(info.mlp_width));
    check_memory_room((maps + working) * sizeof(float),
                      info.name + ": a source of " + std::to_string(Ts) + " tokens and a target of " +
                          std::to_string(Tt) + " (the encoder's and the cross-attention's maps, kept)",
                      "use a shorter source");
}

}   // namespace

HfSeq2SeqModel::HfSeq2SeqModel(const Seq2SeqFamily& family, const std::string& folder, const LoadControl& control)
    : config_(read_hf_config(folder, family.read_config)), names_(family.names(config_)) {
    const Seq2SeqConfig& c = config_;
    HfCheckpointWeights checkpoint(folder, names_.prefix, control);
    mapped_ = checkpoint.mapped;
    HfTensorLoader loader(checkpoint.table);
    weights_.encoder = layout_stack(c, c.encoder_layers, false);
    weights_.decoder = layout_stack(c, c.decoder_layers, true);
    for (Norm* norm : {&weights_.encoder_embedding_norm, &weights_.decoder_embedding_norm, &weights_.encoder_final_norm,
                       &weights_.decoder_final_norm}) {
        *norm = norm_of(c);
    }
    bind_tensors(weights_, c, names_, loader);
    share_position_bias(weights_.encoder);
    share_position_bias(weights_.decoder);
    std::set<std::string> ignorable;
    for (const Seq2SeqStackNames* stack : {&names_.encoder, &names_.decoder}) {
        for (const std::string& name : stack->ignorable) ignorable.insert(stack->stack + name);
    }
    checkpoint.table.check_all_taken(ignorable, c.architecture);
    for (auto [name, copy] : {std::pair{&names_.encoder_embed, &weights_.encoder_embed},
                              std::pair{&names_.decoder_embed, &weights_.decoder_embed}}) {
        if (copy->size() != 0 && !(*copy == weights_.shared)) {
            throw Error(folder + ": " + *name + ".weight differs from " + names_.shared +
                        ".weight; transformers ties them (one embedding for both stacks)");
        }
        *copy = WeightMatrix();
    }
    std::string head_warning;
    if (c.tied_head && weights_.head.size() != 0) {
        if (!(weights_.head == weights_.shared)) {
            head_warning = names_.head + ".weight differs from " + names_.shared +
                           ".weight, but tie_word_embeddings ties them: the embedding is the head, as in transformers";
        }
        weights_.head = WeightMatrix();   // before describe(): one parameter set, counted once
    }
    const std::string tokenizer_warning = read_tokenizer(folder);
    describe(folder, checkpoint.table, checkpoint.stored);
    for (const std::string* warning : {&std::as_const(head_warning), &tokenizer_warning}) {
        if (!warning->empty()) info_.warnings.push_back(*warning);
    }
}

std::string HfSeq2SeqModel::read_tokenizer(const std::string& folder) {
    try {
        tokens_ = std::make_unique<HfTextTokens>(folder);
    } catch (const Error& e) {
        if (config_.model_type != "t5") throw;
        // T5's tokenizer.json (a Unigram model behind a Precompiled normalizer) is not read
        // yet: the model still reads token ids, and says why it reads no text.
        tokens_ = std::make_unique<HfTextTokens>();
        tokenizer_note_ = e.what();
        return "the tokenizer is not read, so the model takes token ids: " + tokenizer_note_;
    }
    if (tokens_->has_tokenizer() && tokens_->files().find("tokenizer.json") == std::string::npos) {
        // vocab.json + merges.txt alone read as GPT-2's, which adds no <s> ... </s>: BART's
        // text would lose the tokens its tokenizer puts around it (and the shifted target one).
        tokenizer_note_ =
            tokens_->files() + " without tokenizer.json: the special tokens BART's tokenizer adds are not known";
        tokens_ = std::make_unique<HfTextTokens>();
        return "the tokenizer is not read, so the model takes token ids: " + tokenizer_note_;
    }
    return "";
}

void HfSeq2SeqModel::describe(const std::string& folder, const HfTensorTable& table, const HfWeights& stored) {
    const Seq2SeqConfig& c = config_;
    info_.name = folder;
    info_.description = "Hugging Face " + c.architecture + " (" + c.model_type + ": E=" + std::to_string(c.width) +
                        " H=" + std::to_string(c.n_heads) + " L=" + std::to_string(c.encoder_layers) + "+" +
                        std::to_string(c.decoder_layers) + ", V=" + std::to_string(c.vocab_size) + ")";
    info_.n_layers = c.decoder_layers;
    info_.n_heads = c.n_heads;
    info_.width = c.width;
    info_.head_width = c.head_width;
    info_.mlp_width = c.mlp_width;
    info_.max_tokens = c.max_tokens;
    info_.takes_text = true;
    info_.reads_ids_only = !tokens_->has_tokenizer();
    info_.causal = true;
    info_.encoder_decoder = true;
    info_.encoder_layers = c.encoder_layers;
    info_.decoder_start_id = c.decoder_start_id;
    info_.end_id = c.end_id;
    info_.n_outputs = c.vocab_size;
    // final_logits_bias is a buffer, not a parameter (transformers counts none).
    info_.n_parameters = count_bound([&](auto& b) { bind_tensors(std::as_const(weights_), c, names_, b); }) -
                         weights_.logits_bias.size();
    info_.warnings = table.warnings();
    info_.settings = {
        {"model_type", c.model_type},
        {"architecture", c.architecture},
        {"layers", std::to_string(c.encoder_layers) + " encoder, " + std::to_string(c.decoder_layers) + " decoder"},
        {"heads", std::to_string(c.n_heads) + " in each self- and cross-attention"},
        {"head_width", std::to_string(c.head_width)},
        {"vocab_size", std::to_string(c.vocab_size)},
        {"norm",
         std::string(c.norm_kind == NormKind::layer_norm ? "LayerNorm" : "RMSNorm") + ", eps " + number(c.norm_eps) +
             (c.norm_placement == NormPlacement::post ? ", after each sublayer's sum" : ", before each sublayer")},
        {"positions", c.position_buckets > 0
                          ? "relative, " + std::to_string(c.position_buckets) + " buckets up to distance " +
                                std::to_string(c.position_max_distance)
                          : "learned, " + std::to_string(c.max_tokens) + " (" + c.max_tokens_field + ")"},
        {"score_scale", c.score_scale != 0 ? number(c.score_scale) : "1/sqrt(head_width)"},
        {"lm_head", c.tied_head ? "tied to " + names_.shared + (c.head_scale != 1.0f ? " (hidden x d_model^-0.5)" : "")
                                : names_.head + ".weight"},
        {"decoder_start_token_id", std::to_string(c.decoder_start_id)},
        {"tokenizer", tokens_->files()},
        {"weights", stored.description()},
    };
    if (c.embedding_scale != 1.0f) info_.settings.emplace("embedding_scale", number(c.embedding_scale));
    for (const auto& [key, value] : c.settings) info_.settings[key] = value;
}

ModelInput HfSeq2SeqModel::embed(std::vector<std::int64_t> ids, bool decoder) const {
    mapped_.check();
    const auto T = static_cast<Eigen::Index>(ids.size());
    Matrix x = weights_.shared.gather_rows(ids);
    if (config_.embedding_scale != 1.0f) x *= config_.embedding_scale;
    const WeightMatrix& positions = decoder ? weights_.decoder_positions : weights_.encoder_positions;
    if (positions.size() != 0) {
        std::vector<std::int64_t> rows(static_cast<std::size_t>(T));
        std::iota(rows.begin(), rows.end(), config_.position_offset);
        x += positions.gather_rows(rows);
    }
    const Norm& norm = decoder ? weights_.decoder_embedding_norm : weights_.encoder_embedding_norm;
    if (norm.weight.size() != 0) x = norm_forward(norm, x);
    ModelInput input;
    input.embeddings = std::move(x);
    input.labels = tokens_->labels(ids);
    input.ids = std::move(ids);
    return input;
}

ModelInput HfSeq2SeqModel::source_input(ModelInput source) const {
    const std::vector<std::int64_t> start = {config_.decoder_start_id};
    ModelInput target = embed(start, true);
    target.source = std::make_shared<const ModelInput>(std::move(source));
    return target;
}

ModelInput HfSeq2SeqModel::encode_text(std::string_view text) const {
    if (!tokenizer_note_.empty()) {
        throw Error(info_.name + ": the tokenizer is not read (" + tokenizer_note_ +
                    "), so it takes --tokens, not text");
    }
    if (text.empty()) throw Error("text: the sentence is empty");
    ModelInput tokens =
        tokens_->encode(text, config_.max_tokens, config_.vocab_size, info_.name, config_.max_tokens_field);
    ModelInput source = embed(std::move(tokens.ids), false);
    source.labels = std::move(tokens.labels);
    source.spans = std::move(tokens.spans);
    return source_input(std::move(source));
}

ModelInput HfSeq2SeqModel::encode_ids(std::span<const std::int64_t> ids) const {
    hf_check_token_ids(ids, config_.vocab_size, config_.max_tokens, info_.name, config_.max_tokens_field);
    return source_input(embed(std::vector<std::int64_t>(ids.begin(), ids.end()), false));
}

ModelInput HfSeq2SeqModel::encode_target_ids(const ModelInput& input, std::span<const std::int64_t> ids) const {
    if (!input.source) throw Error(info_.name + ": the target needs a source (an input this model encoded)");
    hf_check_token_ids(ids, config_.vocab_size, config_.max_tokens, info_.name, config_.max_tokens_field, "vocab_size",
                       "");
    ModelInput target = embed(std::vector<std::int64_t>(ids.begin(), ids.end()), true);
    target.source = input.source;
    return target;
}

ModelInput HfSeq2SeqModel::encode_target_text(const ModelInput& input, std::string_view text) const {
    if (!tokens_->has_tokenizer()) {
        throw Error(info_.name + ": no tokenizer read, so the target is given as token ids (--target-tokens)");
    }
    ModelInput tokens =
        tokens_->encode(text, config_.max_tokens, config_.vocab_size, info_.name, config_.max_tokens_field);
    // transformers' shift_tokens_right: the labels' ids after the start token, the last dropped.
    std::vector<std::int64_t> ids = {config_.decoder_start_id};
    ids.insert(ids.end(), tokens.ids.begin(), tokens.ids.end() - 1);
    ModelInput target = encode_target_ids(input, ids);
    target.spans.assign(1, {0, 0});
    target.spans.insert(target.spans.end(), tokens.spans.begin(), tokens.spans.end() - 1);
    return target;
}

ModelTrace HfSeq2SeqModel::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    if (!input.source) throw Error(info_.name + ": an encoder-decoder model's input has a source and a target");
    check_kept_maps_fit(info_, input.source->embeddings.rows(), input.embeddings.rows());
    // The encoder: every map kept, its own heads off, no mask beyond the source's own length.
    RunOptions encoder_options;
    encoder_options.disabled_heads = options.disabled_encoder_heads;
    encoder_options.detail = options.detail;
    encoder_options.stages_layer = options.stages_layer;   // the Stages view of the encoder kind
    StackRun encoder = run_blocks(info_.name, weights_.encoder, input.source->embeddings, encoder_options);
    const Matrix memory = weights_.encoder_final_norm.weight.size() != 0
                              ? norm_forward(weights_.encoder_final_norm, encoder.x)
                              : std::move(encoder.x);
    // The decoder computes every row: a run it could resume from or extend reads another encoder.
    RunOptions decoder_options = options;
    decoder_options.resume_from = nullptr;
    decoder_options.prefix_from = nullptr;
    const CrossAttentionRun cross{&memory, options.disabled_cross_heads};
    StackRun decoder = run_blocks(info_.name, weights_.decoder, input.embeddings, decoder_options, -1, &cross);
    ModelTrace trace = std::move(decoder.trace);
    trace.encoder_layers = std::move(encoder.trace.layers);
    trace.encoder_mask = std::move(encoder.trace.mask);
    trace.hidden = weights_.decoder_final_norm.weight.size() != 0 ? norm_forward(weights_.decoder_final_norm, decoder.x)
                                                                  : std::move(decoder.x);
    if (config_.head_scale != 1.0f) trace.hidden *= config_.head_scale;
    const Eigen::Index rows =
        options.last_logit_rows >= 0 ? std::min(options.last_logit_rows, trace.hidden.rows()) : trace.hidden.rows();
    trace.logits = lm_logits(trace.hidden.bottomRows(rows));
    return trace;
}

AttentionTrace HfSeq2SeqModel::layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                            Eigen::Index only_head) const {
    // The decoder's self-attention comes before its cross-attention: its stages need no encoder.
    return stack_layer_stages(weights_.decoder, trace, layer, disabled_heads, only_head);
}

Matrix HfSeq2SeqModel::lm_logits(const ConstMatrixRef& hidden) const {
    const WeightMatrix& head = weights_.head.size() != 0 ? weights_.head : weights_.shared;   // [V, E]
    Matrix logits(hidden.rows(), head.rows());
    if (hidden.rows() == 0) return logits;
    head.multiply(hidden, logits);
    if (weights_.logits_bias.size() != 0) logits.rowwise() += weights_.logits_bias.row(0);
    return logits;
}

Matrix HfSeq2SeqModel::logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const {
    const Eigen::Index T = trace.hidden.rows();
    if (first >= 0 && n > 0 && first + n <= T && first < T - trace.logits.rows()) {
        mapped_.check();
        return lm_logits(trace.hidden.middleRows(first, n));   // rows the run did not keep
    }
    return Model::logits_rows(trace, first, n);
}

std::string HfSeq2SeqModel::output_label(Eigen::Index index) const { return tokens_->label(index); }

std::vector<OwnedTensor> HfSeq2SeqModel::export_weights() const {
    return export_bound([&](auto& b) { bind_tensors(weights_, config_, names_, b); });
}

std::unique_ptr<Model> load_hf_seq2seq(const Seq2SeqFamily& family, const std::string& folder,
                                       const LoadControl& control) {
    return std::make_unique<HfSeq2SeqModel>(family, folder, control);
}

}   // namespace headscope
