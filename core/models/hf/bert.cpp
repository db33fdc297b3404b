#include "core/models/hf/bert.h"

#include "core/base/error.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"
#include "core/text/tokenizer/legacy_files.h"
#include "core/text/tokenizer/tokenizer_folder.h"

#include <cmath>
#include <filesystem>
#include <set>

namespace headscope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr std::string_view sep_text = "[SEP]";

std::string architecture_name(const HfBertConfig& c, HfBertHead head, bool next_sentence) {
    if (!c.architecture.empty()) return c.architecture;
    switch (head) {
    case HfBertHead::none: return "BertModel";
    case HfBertHead::masked_lm: return next_sentence ? "BertForPreTraining" : "BertForMaskedLM";
    case HfBertHead::classifier: return "BertForSequenceClassification";
    }
    return "BertModel";
}

}   // namespace

namespace {

// transformers ties cls.predictions.decoder.bias to cls.predictions.bias; a checkpoint may
// store either or both (then equal). Export writes cls.predictions.bias.
const std::string decoder_bias_alias = "cls.predictions.decoder.bias";

// Every tensor of a BERT checkpoint, once: loading, export and the parameter count.
template <typename Weights, typename Binder>
void bind_tensors(Weights& w, const HfBertConfig& c, Binder& b) {
    const Eigen::Index E = c.hidden_size;
    const Eigen::Index I = c.intermediate_size;
    const Eigen::Index V = c.vocab_size;
    const std::string e_why = "config.json: hidden_size = " + std::to_string(E);
    const std::string i_why = e_why + ", intermediate_size = " + std::to_string(I);
    const std::string v_why = "config.json: vocab_size = " + std::to_string(V) + ", hidden_size = " + std::to_string(E);
    b.weight("embeddings.word_embeddings.weight", w.word_embeddings, V, E, v_why);
    b.matrix("embeddings.position_embeddings.weight", w.position_embeddings, c.max_position_embeddings, E,
             "config.json: max_position_embeddings = " + std::to_string(c.max_position_embeddings) +
                 ", hidden_size = " + std::to_string(E));
    b.matrix("embeddings.token_type_embeddings.weight", w.token_type_embeddings, c.type_vocab_size, E,
             "config.json: type_vocab_size = " + std::to_string(c.type_vocab_size) +
                 ", hidden_size = " + std::to_string(E));
    bind_norm(b, "embeddings.LayerNorm", w.embeddings_norm, E, e_why);
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        auto& block = w.stack.blocks[l];
        const std::string prefix = "encoder.layer." + std::to_string(l) + ".";
        bind_linear(b, prefix + "attention.self.query", block.attention.q, E, E, e_why);
        bind_linear(b, prefix + "attention.self.key", block.attention.k, E, E, e_why);
        bind_linear(b, prefix + "attention.self.value", block.attention.v, E, E, e_why);
        bind_linear(b, prefix + "attention.output.dense", block.attention.out, E, E, e_why);
        bind_norm(b, prefix + "attention.output.LayerNorm", block.attention_norm, E, e_why);
        bind_linear(b, prefix + "intermediate.dense", block.mlp.up, I, E, i_why);
        bind_linear(b, prefix + "output.dense", block.mlp.down, E, I, i_why);
        bind_norm(b, prefix + "output.LayerNorm", block.mlp_norm, E, e_why);
    }
    // BertForMaskedLM has no pooler, but checkpoints saved from BertForPreTraining
    // (bert-base-uncased) keep it: taken when stored; the classifier needs it.
    const bool pooler = w.pooler.weight.size() != 0;
    if (w.head == HfBertHead::classifier || b.present("pooler.dense.weight", pooler) ||
        b.present("pooler.dense.bias", pooler)) {
        bind_linear(b, "pooler.dense", w.pooler, E, E, e_why);
    }
    if (w.head == HfBertHead::masked_lm) {
        bind_linear(b, "cls.predictions.transform.dense", w.transform, E, E, e_why);
        bind_norm(b, "cls.predictions.transform.LayerNorm", w.transform_norm, E, e_why);
        if (b.present("cls.predictions.decoder.weight", w.decoder.size() != 0)) {
            b.weight("cls.predictions.decoder.weight", w.decoder, V, E,
                     v_why + "; the masked-LM decoder is tied to word_embeddings");
        }
        if (b.present("cls.predictions.bias", true) || !b.present(decoder_bias_alias, false)) {
            b.vector("cls.predictions.bias", w.decoder_bias, V, "config.json: vocab_size = " + std::to_string(V));
        }
        // BertForPreTraining's next-sentence head: checked and kept (for export), not run.
        const bool next = w.seq_relationship.weight.size() != 0;
        if (c.architecture == "BertForPreTraining" || b.present("cls.seq_relationship.weight", next) ||
            b.present("cls.seq_relationship.bias", next)) {
            bind_linear(b, "cls.seq_relationship", w.seq_relationship, 2, E, e_why + ", 2 classes (is next, is not)");
        }
    }
    if (w.head == HfBertHead::classifier) {
        const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
        bind_linear(b, "classifier", w.classifier, n_labels, E,
                    e_why + ", " + std::to_string(n_labels) + (n_labels == 1 ? " label" : " labels") +
                        " in id2label / num_labels");
    }
}

// Which head: config.json's architectures when given (its tensors must then be there),
// otherwise whatever head the file holds.
HfBertHead head_of(const HfBertConfig& c, const HfTensorTable& table) {
    if (c.architecture == "BertForMaskedLM" || c.architecture == "BertForPreTraining") return HfBertHead::masked_lm;
    if (c.architecture == "BertForSequenceClassification") return HfBertHead::classifier;
    if (c.architecture.empty()) {
        if (table.has("cls.predictions.transform.dense.weight") || table.has("cls.predictions.bias")) {
            return HfBertHead::masked_lm;
        }
        if (table.has("classifier.weight")) return HfBertHead::classifier;
    }
    return HfBertHead::none;
}

// The masked-LM decoder bias stored under its tied name too: taken, and equal to
// cls.predictions.bias when both are stored.
void take_decoder_bias_alias(HfBertWeights& w, HfTensorTable& table, Eigen::Index V, const std::string& folder) {
    if (!table.has(decoder_bias_alias)) return;
    const Vector bias = table.vector(decoder_bias_alias, V, "config.json: vocab_size = " + std::to_string(V));
    if (w.decoder_bias.size() != 0 && bias != w.decoder_bias) {
        throw Error(folder + ": tensors 'cls.predictions.bias' and '" + decoder_bias_alias +
                    "' differ, but transformers ties them (one is the other)");
    }
    w.decoder_bias = bias;
}

// The "head" setting `info` shows.
std::string head_text(const HfBertWeights& w, bool decoder_is_embeddings, bool next_sentence, std::size_t n_labels) {
    if (w.head == HfBertHead::masked_lm) {
        std::string text = "masked LM (cls.predictions), decoder ";
        text += w.decoder.size() != 0   ? "cls.predictions.decoder.weight"
                : decoder_is_embeddings ? "tied to word_embeddings (cls.predictions.decoder.weight equals it)"
                                        : "tied to word_embeddings";
        if (next_sentence) text += "; next-sentence head cls.seq_relationship loaded, not run";
        return text;
    }
    if (w.head == HfBertHead::classifier) {
        return "sequence classifier (pooler + classifier, " + std::to_string(n_labels) + " labels)";
    }
    return "none";
}

}   // namespace

HfBertConfig read_hf_bert_config(const std::string& config_path) {
    const json config = read_hf_json_file(config_path);
    const HfFields f(config, config_path);
    HfBertConfig c;
    const std::string model_type = f.string("model_type", "");
    if (model_type != "bert") f.fail("model_type", "expected 'bert', got " + hf_quoted(model_type));
    c.architecture = read_hf_architecture(
        f, "bert", {"BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForSequenceClassification"});
    c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, 1 << 24);
    c.hidden_size = f.integer("hidden_size", c.hidden_size, 1, 65536);
    c.num_hidden_layers = f.integer("num_hidden_layers", c.num_hidden_layers, 1, 1024);
    c.num_attention_heads = f.integer("num_attention_heads", c.num_attention_heads, 1, 65536);
    c.intermediate_size = f.integer("intermediate_size", c.intermediate_size, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", c.hidden_act);
    c.activation = read_hf_activation(f, c.hidden_act);
    c.max_position_embeddings = f.integer("max_position_embeddings", c.max_position_embeddings, 1, 1 << 20);
    c.type_vocab_size = f.integer("type_vocab_size", c.type_vocab_size, 1, 1 << 20);
    c.layer_norm_eps = read_hf_epsilon(f, "layer_norm_eps", c.layer_norm_eps);
    const std::string positions = f.string("position_embedding_type", "absolute");
    if (positions != "absolute") {
        f.fail("position_embedding_type", hf_quoted(positions) + " is not supported (only 'absolute': learned "
                                                                 "position embeddings added to the input)");
    }
    if (f.boolean("is_decoder", false)) {
        f.fail("is_decoder", "true is not supported (BERT is read as an encoder: no causal decoder, no cache)");
    }
    if (f.boolean("add_cross_attention", false)) {
        f.fail("add_cross_attention", "true is not supported (no encoder-decoder cross-attention)");
    }
    c.id2label = read_hf_labels(f);
    check_hf_head_split(config_path, c.hidden_size, "hidden_size", c.num_attention_heads, "num_attention_heads");
    return c;
}

HfBertModel::HfBertModel(const std::string& folder, const LoadControl& control) {
    const fs::path dir(folder);
    config_ = read_hf_bert_config((dir / "config.json").string());
    const HfBertConfig& c = config_;

    const HfWeights stored = HfWeights::open(folder);
    mapped_ = HfMappedFiles(stored);
    HfTensorTable table(stored, "bert.", folder, control);
    HfBertWeights& w = weights_;
    w.head = head_of(c, table);

    // BERT's block: post-LN, sequential; every norm the config's epsilon.
    w.stack = layer_norm_stack({NormPlacement::post, Residual::sequential, false}, c.num_hidden_layers,
                               c.num_attention_heads, c.layer_norm_eps, c.activation);
    w.stack.max_tokens = c.max_position_embeddings;
    w.embeddings_norm.eps = c.layer_norm_eps;
    w.transform_norm.eps = c.layer_norm_eps;
    HfTensorLoader loader(table);
    bind_tensors(w, c, loader);
    for (Block& block : w.stack.blocks) block.attention.validate();
    // A stored copy of the word embeddings (the tied decoder) is one parameter set, not two.
    const bool decoder_is_embeddings = w.decoder.size() != 0 && w.decoder == w.word_embeddings;
    if (decoder_is_embeddings) w.decoder = WeightMatrix();
    if (w.head == HfBertHead::masked_lm) take_decoder_bias_alias(w, table, c.vocab_size, folder);
    const bool next_sentence = w.seq_relationship.weight.size() != 0;
    if (w.head == HfBertHead::classifier) id2label_ = c.id2label;

    const std::string architecture = architecture_name(c, w.head, next_sentence);
    table.check_all_taken({"embeddings.position_ids", "embeddings.token_type_ids"}, architecture);
    const std::string tokenizer_files = read_tokenizer(folder);
    describe(folder, architecture, head_text(w, decoder_is_embeddings, next_sentence, c.id2label.size()),
             tokenizer_files, table, stored);
}

std::string HfBertModel::read_tokenizer(const std::string& folder) {
    const fs::path dir(folder);
    std::error_code ec;
    std::optional<tokenizer::FolderTokenizer> found;
    try {
        found = tokenizer::read_folder_tokenizer(folder);
    } catch (const Error& e) {
        // A tokenizer_config.json asking for what is not done refuses --text only: vocab.txt
        // still names the tokens (an error in vocab.txt itself is thrown again below).
        if (fs::exists(dir / "tokenizer.json", ec) || !fs::exists(dir / "vocab.txt", ec) ||
            !fs::exists(dir / "tokenizer_config.json", ec)) {
            throw;
        }
        text_refusal_ = e.what();
        found = tokenizer::FolderTokenizer{tokenizer::read_bert_vocab((dir / "vocab.txt").string(), std::string()),
                                           "vocab.txt + tokenizer_config.json (labels only: --text refused)"};
    }
    if (!found) {
        text_refusal_ =
            folder + ": no tokenizer (tokenizer.json, or BERT's vocab.txt), so it takes --tokens, not --text";
        return "none";
    }
    tokenizer_.emplace(std::move(found->tokenizer));
    const auto cls = tokenizer_->find("[CLS]");
    const auto sep = tokenizer_->find("[SEP]");
    if (!cls || !sep) {
        text_refusal_ = folder + ": the tokenizer has no [CLS] or [SEP] token, so it takes --tokens, not --text";
    } else {
        cls_id_ = *cls;
        sep_id_ = *sep;
    }
    return found->files;
}

void HfBertModel::describe(const std::string& folder, const std::string& architecture, const std::string& head,
                           const std::string& tokenizer_files, const HfTensorTable& table, const HfWeights& stored) {
    const HfBertConfig& c = config_;
    const Eigen::Index E = c.hidden_size;
    const Eigen::Index V = c.vocab_size;
    const bool classifier = weights_.head == HfBertHead::classifier;
    info_.name = folder;
    info_.description = "Hugging Face " + architecture + " (bert: E=" + std::to_string(E) +
                        " H=" + std::to_string(c.num_attention_heads) + " L=" + std::to_string(c.num_hidden_layers) +
                        ", V=" + std::to_string(V) + ", " + std::to_string(c.max_position_embeddings) + " positions" +
                        (classifier ? ", " + std::to_string(c.id2label.size()) + " labels" : "") + ")";
    info_.n_layers = c.num_hidden_layers;
    info_.n_heads = c.num_attention_heads;
    info_.width = E;
    info_.head_width = E / c.num_attention_heads;
    info_.mlp_width = c.intermediate_size;
    info_.max_tokens = c.max_position_embeddings;
    info_.takes_text = true;
    info_.reads_ids_only = !text_refusal_.empty();
    info_.causal = weights_.stack.spec.causal;
    info_.classifier = classifier;
    ParameterCounter counter;
    bind_tensors(weights_, c, counter);
    info_.n_parameters = counter.count();
    info_.warnings = table.warnings();
    info_.settings = {
        {"model_type", "bert"},
        {"architecture", architecture},
        {"hidden_act", c.hidden_act},
        {"layer_norm_eps", hf_number_text(c.layer_norm_eps)},
        {"vocab_size", std::to_string(V)},
        {"max_position_embeddings", std::to_string(c.max_position_embeddings)},
        {"type_vocab_size", std::to_string(c.type_vocab_size)},
        {"head", head},
        {"tokenizer", tokenizer_files},
        {"weights", stored.description()},
    };
}

ModelInput HfBertModel::embed(std::vector<std::int64_t> ids, const std::vector<std::int32_t>& type_ids) const {
    mapped_.check();
    const auto T = static_cast<Eigen::Index>(ids.size());
    Matrix x = weights_.position_embeddings.topRows(T);               // [T, E]
    const Matrix words = weights_.word_embeddings.gather_rows(ids);   // [T, E]
    for (Eigen::Index t = 0; t < T; ++t) {
        x.row(t) += words.row(t) + weights_.token_type_embeddings.row(type_ids[static_cast<std::size_t>(t)]);
    }
    ModelInput input;
    input.embeddings = norm_forward(weights_.embeddings_norm, x);
    input.ids = std::move(ids);
    return input;
}

ModelInput HfBertModel::encode_text(std::string_view text) const {
    if (!text_refusal_.empty()) throw Error(text_refusal_);
    // The first "[SEP]" typed splits the text into a pair: [CLS] A [SEP] B [SEP], types 0 ... 0 1 ... 1.
    const std::size_t sep = text.find(sep_text);
    const bool pair = sep != std::string_view::npos;
    if (pair && config_.type_vocab_size < 2) {
        throw Error("text: a sentence pair ([SEP] in the text) needs token type 1, but " + info_.name +
                    " has config.json: type_vocab_size = " + std::to_string(config_.type_vocab_size));
    }
    const std::size_t pair_offset = pair ? sep + sep_text.size() : text.size();
    std::vector<tokenizer::EncodedToken> tokens{{cls_id_, 0, 0, true}};
    for (const auto& t : tokenizer_->encode(text.substr(0, pair ? sep : text.size()), false, "text"))
        tokens.push_back(t);
    tokens.push_back({sep_id_, pair ? sep : text.size(), pair_offset, true});   // the [SEP] closing A is the one typed
    const std::size_t first_of_b = tokens.size();
    if (pair) {
        for (auto t : tokenizer_->encode(text.substr(pair_offset), false, "text")) {
            t.begin += pair_offset;   // spans are in the whole text
            t.end += pair_offset;
            tokens.push_back(t);
        }
        tokens.push_back({sep_id_, text.size(), text.size(), true});
    }
    if (tokens.size() == (pair ? 3u : 2u)) throw Error("text: the sentence is empty");
    hf_check_length(tokens.size(), config_.max_position_embeddings, "text", info_.name, "max_position_embeddings");
    std::vector<std::int64_t> ids;
    std::vector<std::int32_t> ids32;
    std::vector<std::int32_t> type_ids;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        ids32.push_back(tokens[i].id);
        type_ids.push_back(pair && i >= first_of_b ? 1 : 0);
    }
    std::vector<std::string> labels = tokenizer_->labels(ids32);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        hf_check_text_token(labels[i], tokens[i].id, config_.vocab_size, info_.name, "the tokenizer");
        ids.push_back(tokens[i].id);
    }
    ModelInput input = embed(std::move(ids), type_ids);
    input.labels = std::move(labels);
    for (const auto& t : tokens) input.spans.emplace_back(t.begin, t.end);
    return input;
}

ModelInput HfBertModel::encode_ids(std::span<const std::int64_t> ids) const {
    hf_check_token_ids(ids, config_.vocab_size, config_.max_position_embeddings, info_.name, "max_position_embeddings");
    // Ids carry no segment: every position is token type 0.
    ModelInput input =
        embed(std::vector<std::int64_t>(ids.begin(), ids.end()), std::vector<std::int32_t>(ids.size(), 0));
    for (const std::int64_t id : ids) input.labels.push_back(output_label(id));
    return input;
}

ModelTrace HfBertModel::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    // The embedding Norm is already applied to input.embeddings.
    StackRun run = run_blocks(info_.name, weights_.stack, input.embeddings, options);
    ModelTrace trace = std::move(run.trace);
    trace.hidden = std::move(run.x);
    switch (weights_.head) {
    case HfBertHead::none: break;
    case HfBertHead::masked_lm: {
        Matrix h = linear_forward(weights_.transform, trace.hidden);   // [T, E]
        activate_inplace(h, config_.activation);
        h = norm_forward(weights_.transform_norm, h);
        const WeightMatrix& decoder =
            weights_.decoder.size() != 0 ? weights_.decoder : weights_.word_embeddings;   // [V, E]
        trace.logits.resize(h.rows(), decoder.rows());                                    // [T, V]
        decoder.multiply(h, trace.logits);
        trace.logits.rowwise() += weights_.decoder_bias.transpose();
        break;
    }
    case HfBertHead::classifier: {
        Matrix pooled = linear_forward(weights_.pooler, trace.hidden.topRows(1));   // [1, E], from [CLS]
        pooled = pooled.array().tanh().matrix();
        trace.logits = linear_forward(weights_.classifier, pooled);   // [1, labels]
        break;
    }
    }
    return trace;
}

std::string HfBertModel::output_label(Eigen::Index index) const {
    if (weights_.head == HfBertHead::classifier) {
        const auto i = static_cast<std::size_t>(index);
        return index >= 0 && i < id2label_.size() ? id2label_[i] : std::to_string(index);
    }
    if (tokenizer_ && index >= 0 && index < tokenizer_->end_id()) {
        if (const std::string* piece = tokenizer_->token(static_cast<std::int32_t>(index))) return *piece;
    }
    return std::to_string(index);
}

std::vector<OwnedTensor> HfBertModel::export_weights() const {
    TensorExporter exporter;
    bind_tensors(weights_, config_, exporter);
    return exporter.take();
}

std::unique_ptr<Model> load_hf_bert(const std::string& folder, const LoadControl& control) {
    return std::make_unique<HfBertModel>(folder, control);
}

}   // namespace headscope
