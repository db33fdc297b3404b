// BERT (model_type "bert": BertModel, BertForMaskedLM, BertForPreTraining,
// BertForSequenceClassification), as transformers' modeling_bert.py computes it: post-LN
// blocks over
//   x = LayerNorm(word_embeddings[ids] + position_embeddings[0 .. T-1]
//                 + token_type_embeddings[type_ids])                                [T, E]
//   hidden = x after the last layer (BERT has no final norm)
//   masked LM head: logits = LayerNorm(act(transform.dense(hidden))) word_embeddings^T
//                            + cls.predictions.bias                                  [T, V]
//   classifier:     logits = classifier(tanh(pooler.dense(hidden[0])))           [1, labels]
//
// The embedding LayerNorm is applied in encode_*: ModelInput::embeddings is what the first
// layer consumes, and the token types (segment A / B of a sentence pair) exist only there.
// BertForPreTraining's next-sentence head (cls.seq_relationship) is loaded, checked and
// exported, but not run: dump's logits are the masked-LM head's. The int64 buffers
// embeddings.position_ids and embeddings.token_type_ids are ignored. Text is encoded by the
// folder's tokenizer (tokenizer.json, or vocab.txt with tokenizer_config.json's options, as
// BertTokenizerFast): "[CLS] text [SEP]", or, when the text contains "[SEP]", the sentence
// pair "[CLS] A [SEP] B [SEP]" split at the first one.
#include "core/models/hf/families/bert.h"

#include "core/base/error.h"
#include "core/text/tokenizer/legacy_files.h"
#include "core/text/tokenizer/tokenizer_folder.h"

#include <filesystem>
#include <optional>

namespace headscope {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view sep_text = "[SEP]";

// transformers ties cls.predictions.decoder.bias to cls.predictions.bias; a checkpoint may
// store either or both (then equal). Export writes cls.predictions.bias.
const std::string decoder_bias_alias = "cls.predictions.decoder.bias";

// What BertConfig says beyond the stack (defaults: bert-base-uncased).
struct BertSettings {
    Eigen::Index vocab_size = 30522;              // V
    Eigen::Index max_position_embeddings = 512;   // the longest sequence
    Eigen::Index type_vocab_size = 2;             // token types (segments A and B)
};

// Which head the checkpoint carries.
enum class BertHead {
    none,         // BertModel: no logits
    masked_lm,    // BertForMaskedLM, BertForPreTraining: cls.predictions -> [T, V]
    classifier,   // BertForSequenceClassification: pooler + classifier -> [1, labels]
};

// Names are transformers' own, without the "bert." prefix.
struct BertWeights {
    WeightMatrix word_embeddings;   // embeddings.word_embeddings.weight       [V, E]
    Matrix position_embeddings;     // embeddings.position_embeddings.weight   [max_position_embeddings, E]
    Matrix token_type_embeddings;   // embeddings.token_type_embeddings.weight [type_vocab_size, E]
    Norm embeddings_norm;           // embeddings.LayerNorm.weight / .bias     [E]
    Linear pooler;                  // pooler.dense [E, E] / [E]; empty when not stored
    BertHead head = BertHead::none;
    Linear transform;          // cls.predictions.transform.dense [E, E] / [E]
    Norm transform_norm;       // cls.predictions.transform.LayerNorm     [E]
    WeightMatrix decoder;      // cls.predictions.decoder.weight [V, E] when stored apart;
                               // empty = word_embeddings (tied)
    Vector decoder_bias;       // cls.predictions.bias (= cls.predictions.decoder.bias) [V]
    Linear seq_relationship;   // cls.seq_relationship [2, E] / [2] (next sentence; not run)
    Linear classifier;         // classifier [labels, E] / [labels]
};

class BertEnds final : public EncoderEndsOf<BertEnds> {
public:
    BertEnds(const BertSettings& s, float eps) : s_(s) { w_.embeddings_norm.eps = w_.transform_norm.eps = eps; }

    template <typename Self, typename Binder>
    static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b);
    template <typename Self, typename Binder>
    static void bind_head(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b);

    void choose_head(const EncoderConfig& c, const HfTensorTable& table) override;
    void finish_weights(const EncoderConfig& c, HfTensorTable& table, const std::string& folder) override;
    void read_files(const std::string& folder) override;
    std::string architecture(const EncoderConfig& c) const override;
    std::string describe(ModelInfo& info, const EncoderConfig& c) const override;
    ModelInput encode_text(std::string_view text, const std::string& model) const override;
    ModelInput encode_ids(std::span<const std::int64_t> ids, const std::string& model) const override;
    Matrix logits(const Matrix& hidden, const EncoderConfig& c) const override;
    std::string output_label(Eigen::Index index) const override;

private:
    // The "head" setting `info` shows.
    std::string head_text() const;
    // The pieces of the text (a pair: split at the first "[SEP]") between [CLS] and [SEP]s,
    // with each token's type.
    std::vector<tokenizer::EncodedToken> text_tokens(std::string_view text, const std::string& model,
                                                     std::vector<std::int32_t>& type_ids) const;
    // word + position + token type embeddings, then the embedding LayerNorm.
    ModelInput embed(std::vector<std::int64_t> ids, const std::vector<std::int32_t>& type_ids) const;

    BertSettings s_;
    BertWeights w_;
    bool decoder_is_embeddings_ = false;              // a stored decoder equal to word_embeddings, dropped
    std::vector<std::string> id2label_;               // classifier only
    std::optional<tokenizer::Tokenizer> tokenizer_;   // labels even when text_refusal_ is set
    std::string tokenizer_files_ = "none";
    std::int32_t cls_id_ = 0, sep_id_ = 0;
    std::string text_refusal_;   // why --text cannot be encoded; empty when it can
};

template <typename Self, typename Binder>
void BertEnds::bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
    auto& w = self.w_;
    const BertSettings& s = self.s_;
    const Eigen::Index E = c.width;
    b.weight("embeddings.word_embeddings.weight", w.word_embeddings, s.vocab_size, E,
             "config.json: vocab_size = " + std::to_string(s.vocab_size) + ", hidden_size = " + std::to_string(E));
    b.matrix("embeddings.position_embeddings.weight", w.position_embeddings, s.max_position_embeddings, E,
             "config.json: max_position_embeddings = " + std::to_string(s.max_position_embeddings) +
                 ", hidden_size = " + std::to_string(E));
    b.matrix("embeddings.token_type_embeddings.weight", w.token_type_embeddings, s.type_vocab_size, E,
             "config.json: type_vocab_size = " + std::to_string(s.type_vocab_size) +
                 ", hidden_size = " + std::to_string(E));
    bind_norm(b, "embeddings.LayerNorm", w.embeddings_norm, E, why.e);
}

template <typename Self, typename Binder>
void BertEnds::bind_head(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
    auto& w = self.w_;
    const Eigen::Index E = c.width;
    const Eigen::Index V = self.s_.vocab_size;
    // BertForMaskedLM has no pooler, but checkpoints saved from BertForPreTraining
    // (bert-base-uncased) keep it: taken when stored; the classifier needs it.
    const bool pooler = w.pooler.weight.size() != 0;
    if (w.head == BertHead::classifier || b.present("pooler.dense.weight", pooler) ||
        b.present("pooler.dense.bias", pooler)) {
        bind_linear(b, "pooler.dense", w.pooler, E, E, why.e);
    }
    if (w.head == BertHead::masked_lm) {
        bind_linear(b, "cls.predictions.transform.dense", w.transform, E, E, why.e);
        bind_norm(b, "cls.predictions.transform.LayerNorm", w.transform_norm, E, why.e);
        if (b.present("cls.predictions.decoder.weight", w.decoder.size() != 0)) {
            b.weight("cls.predictions.decoder.weight", w.decoder, V, E,
                     "config.json: vocab_size = " + std::to_string(V) + ", hidden_size = " + std::to_string(E) +
                         "; the masked-LM decoder is tied to word_embeddings");
        }
        if (b.present("cls.predictions.bias", true) || !b.present(decoder_bias_alias, false)) {
            b.vector("cls.predictions.bias", w.decoder_bias, V, "config.json: vocab_size = " + std::to_string(V));
        }
        // BertForPreTraining's next-sentence head: checked and kept (for export), not run.
        const bool next = w.seq_relationship.weight.size() != 0;
        if (c.architecture == "BertForPreTraining" || b.present("cls.seq_relationship.weight", next) ||
            b.present("cls.seq_relationship.bias", next)) {
            bind_linear(b, "cls.seq_relationship", w.seq_relationship, 2, E, why.e + ", 2 classes (is next, is not)");
        }
    }
    if (w.head == BertHead::classifier) {
        const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
        bind_linear(b, "classifier", w.classifier, n_labels, E,
                    why.e + ", " + std::to_string(n_labels) + (n_labels == 1 ? " label" : " labels") +
                        " in id2label / num_labels");
    }
}

void BertEnds::choose_head(const EncoderConfig& c, const HfTensorTable& table) {
    w_.head = choose_encoder_head<BertHead>(
        c.architecture, table,
        {{BertHead::masked_lm,
          {"BertForMaskedLM", "BertForPreTraining"},
          {"cls.predictions.transform.dense.weight", "cls.predictions.bias"}},
         {BertHead::classifier, {"BertForSequenceClassification"}, {"classifier.weight"}}},
        BertHead::none);
    if (w_.head == BertHead::classifier) id2label_ = c.id2label;
}

void BertEnds::finish_weights(const EncoderConfig&, HfTensorTable& table, const std::string& folder) {
    // A stored copy of the word embeddings (the tied decoder) is one parameter set, not two.
    decoder_is_embeddings_ = w_.decoder.size() != 0 && w_.decoder == w_.word_embeddings;
    if (decoder_is_embeddings_) w_.decoder = WeightMatrix();
    // The masked-LM decoder bias stored under its tied name too: taken, and equal to
    // cls.predictions.bias when both are stored.
    if (w_.head != BertHead::masked_lm || !table.has(decoder_bias_alias)) return;
    const Vector bias =
        table.vector(decoder_bias_alias, s_.vocab_size, "config.json: vocab_size = " + std::to_string(s_.vocab_size));
    if (w_.decoder_bias.size() != 0 && bias != w_.decoder_bias) {
        throw Error(folder + ": tensors 'cls.predictions.bias' and '" + decoder_bias_alias +
                    "' differ, but transformers ties them (one is the other)");
    }
    w_.decoder_bias = bias;
}

// The folder's tokenizer (tokenizer.json, or vocab.txt + tokenizer_config.json), when it
// has one; sets text_refusal_ when --text cannot be encoded.
void BertEnds::read_files(const std::string& folder) {
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
        return;
    }
    tokenizer_.emplace(std::move(found->tokenizer));
    tokenizer_files_ = found->files;
    const auto cls = tokenizer_->find("[CLS]");
    const auto sep = tokenizer_->find("[SEP]");
    if (!cls || !sep) {
        text_refusal_ = folder + ": the tokenizer has no [CLS] or [SEP] token, so it takes --tokens, not --text";
    } else {
        cls_id_ = *cls;
        sep_id_ = *sep;
    }
}

std::string BertEnds::architecture(const EncoderConfig& c) const {
    if (!c.architecture.empty()) return c.architecture;
    switch (w_.head) {
    case BertHead::none: return "BertModel";
    case BertHead::masked_lm: return w_.seq_relationship.weight.size() != 0 ? "BertForPreTraining" : "BertForMaskedLM";
    case BertHead::classifier: return "BertForSequenceClassification";
    }
    return "BertModel";
}

std::string BertEnds::head_text() const {
    if (w_.head == BertHead::masked_lm) {
        std::string text = "masked LM (cls.predictions), decoder ";
        text += w_.decoder.size() != 0   ? "cls.predictions.decoder.weight"
                : decoder_is_embeddings_ ? "tied to word_embeddings (cls.predictions.decoder.weight equals it)"
                                         : "tied to word_embeddings";
        if (w_.seq_relationship.weight.size() != 0) {
            text += "; next-sentence head cls.seq_relationship loaded, not run";
        }
        return text;
    }
    if (w_.head == BertHead::classifier) {
        return "sequence classifier (pooler + classifier, " + std::to_string(id2label_.size()) + " labels)";
    }
    return "none";
}

std::string BertEnds::describe(ModelInfo& info, const EncoderConfig&) const {
    info.takes_text = true;
    info.reads_ids_only = !text_refusal_.empty();
    info.classifier = w_.head == BertHead::classifier;
    info.n_outputs = w_.head == BertHead::classifier  ? w_.classifier.weight.rows()
                     : w_.head == BertHead::masked_lm ? w_.word_embeddings.rows()
                                                      : 0;
    info.settings = {
        {"vocab_size", std::to_string(s_.vocab_size)},
        {"max_position_embeddings", std::to_string(s_.max_position_embeddings)},
        {"type_vocab_size", std::to_string(s_.type_vocab_size)},
        {"head", head_text()},
        {"tokenizer", tokenizer_files_},
    };
    return ", V=" + std::to_string(s_.vocab_size) + ", " + std::to_string(s_.max_position_embeddings) + " positions";
}

ModelInput BertEnds::embed(std::vector<std::int64_t> ids, const std::vector<std::int32_t>& type_ids) const {
    const auto T = static_cast<Eigen::Index>(ids.size());
    Matrix x = w_.position_embeddings.topRows(T);               // [T, E]
    const Matrix words = w_.word_embeddings.gather_rows(ids);   // [T, E]
    for (Eigen::Index t = 0; t < T; ++t) {
        x.row(t) += words.row(t) + w_.token_type_embeddings.row(type_ids[static_cast<std::size_t>(t)]);
    }
    ModelInput input;
    input.embeddings = norm_forward(w_.embeddings_norm, x);
    input.ids = std::move(ids);
    return input;
}

std::vector<tokenizer::EncodedToken> BertEnds::text_tokens(std::string_view text, const std::string& model,
                                                           std::vector<std::int32_t>& type_ids) const {
    // The first "[SEP]" typed splits the text into a pair: [CLS] A [SEP] B [SEP], types 0 ... 0 1 ... 1.
    const std::size_t sep = text.find(sep_text);
    const bool pair = sep != std::string_view::npos;
    if (pair && s_.type_vocab_size < 2) {
        throw Error("text: a sentence pair ([SEP] in the text) needs token type 1, but " + model +
                    " has config.json: type_vocab_size = " + std::to_string(s_.type_vocab_size));
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
    for (std::size_t i = 0; i < tokens.size(); ++i) type_ids.push_back(pair && i >= first_of_b ? 1 : 0);
    return tokens;
}

ModelInput BertEnds::encode_text(std::string_view text, const std::string& model) const {
    if (!text_refusal_.empty()) throw Error(text_refusal_);
    std::vector<std::int32_t> type_ids;
    const std::vector<tokenizer::EncodedToken> tokens = text_tokens(text, model, type_ids);
    hf_check_length(tokens.size(), s_.max_position_embeddings, "text", model, "max_position_embeddings");
    std::vector<std::int64_t> ids;
    std::vector<std::int32_t> ids32;
    for (const auto& t : tokens) ids32.push_back(t.id);
    std::vector<std::string> labels = tokenizer_->labels(ids32);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        hf_check_text_token(labels[i], tokens[i].id, s_.vocab_size, model, "the tokenizer");
        ids.push_back(tokens[i].id);
    }
    ModelInput input = embed(std::move(ids), type_ids);
    input.labels = std::move(labels);
    for (const auto& t : tokens) input.spans.emplace_back(t.begin, t.end);
    return input;
}

ModelInput BertEnds::encode_ids(std::span<const std::int64_t> ids, const std::string& model) const {
    hf_check_token_ids(ids, s_.vocab_size, s_.max_position_embeddings, model, "max_position_embeddings");
    // Ids carry no segment: every position is token type 0.
    ModelInput input =
        embed(std::vector<std::int64_t>(ids.begin(), ids.end()), std::vector<std::int32_t>(ids.size(), 0));
    for (const std::int64_t id : ids) input.labels.push_back(output_label(id));
    return input;
}

Matrix BertEnds::logits(const Matrix& hidden, const EncoderConfig& c) const {
    switch (w_.head) {
    case BertHead::none: break;
    case BertHead::masked_lm: {
        Matrix h = linear_forward(w_.transform, hidden);   // [T, E]
        activate_inplace(h, c.activation);
        h = norm_forward(w_.transform_norm, h);
        const WeightMatrix& decoder = w_.decoder.size() != 0 ? w_.decoder : w_.word_embeddings;   // [V, E]
        Matrix logits(h.rows(), decoder.rows());                                                  // [T, V]
        decoder.multiply(h, logits);
        logits.rowwise() += w_.decoder_bias.transpose();
        return logits;
    }
    case BertHead::classifier: {
        Matrix pooled = linear_forward(w_.pooler, hidden.topRows(1));   // [1, E], from [CLS]
        pooled = pooled.array().tanh().matrix();
        return linear_forward(w_.classifier, pooled);   // [1, labels]
    }
    }
    return {};
}

std::string BertEnds::output_label(Eigen::Index index) const {
    if (w_.head == BertHead::classifier) return class_name(id2label_, index);
    if (tokenizer_ && index >= 0 && index < tokenizer_->end_id()) {
        if (const std::string* piece = tokenizer_->token(static_cast<std::int32_t>(index))) return *piece;
    }
    return std::to_string(index);
}

EncoderSetup read_bert_config(const HfFields& f, const std::string&) {
    EncoderConfig c;
    BertSettings s;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "bert") f.fail("model_type", "expected 'bert', got " + hf_quoted(c.model_type));
    c.architecture = read_hf_architecture(
        f, "bert", {"BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForSequenceClassification"});
    s.vocab_size = f.integer("vocab_size", s.vocab_size, 1, 1 << 24);
    read_encoder_basics(f, c);
    c.max_tokens = c.max_run_tokens = s.max_position_embeddings =
        f.integer("max_position_embeddings", s.max_position_embeddings, 1, 1 << 20);
    s.type_vocab_size = f.integer("type_vocab_size", s.type_vocab_size, 1, 1 << 20);
    c.norm_eps = read_hf_epsilon(f, "layer_norm_eps", c.norm_eps);
    c.norm_placement = NormPlacement::post;
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
    check_hf_head_split(f.file(), c.width, "hidden_size", c.n_heads, "num_attention_heads");
    auto ends = std::make_unique<BertEnds>(s, c.norm_eps);
    return {std::move(c), std::move(ends)};
}

}   // namespace

const EncoderFamily& bert_family() {
    static const EncoderFamily family{
        .names = {.attention_norm = "attention.output.LayerNorm",
                  .mlp_norm = "output.LayerNorm",
                  .ignorable = {"embeddings.position_ids", "embeddings.token_type_ids"}},
        .read_config = read_bert_config,
    };
    return family;
}

}   // namespace headscope
