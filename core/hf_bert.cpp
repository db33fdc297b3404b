#include "core/hf_bert.h"

#include "core/hf_tensors.h"

#include "core/error.h"

#include <cmath>
#include <filesystem>
#include <set>

namespace headscope {

namespace {

namespace fs = std::filesystem;

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

HfBertModel::HfBertModel(const std::string& folder, const LoadControl& control) {
    const fs::path dir(folder);
    config_ = read_hf_bert_config((dir / "config.json").string());
    const HfBertConfig& c = config_;

    const HfWeights stored = HfWeights::open(folder);
    mapped_ = HfMappedFiles(stored);
    HfTensorTable table(stored, "bert.", folder, control);

    const Eigen::Index E = c.hidden_size;
    const Eigen::Index I = c.intermediate_size;
    const Eigen::Index V = c.vocab_size;
    const std::string e_why = "config.json: hidden_size = " + std::to_string(E);
    const std::string i_why = e_why + ", intermediate_size = " + std::to_string(I);
    const std::string v_why = "config.json: vocab_size = " + std::to_string(V) + ", hidden_size = " + std::to_string(E);

    // Which head: config.json's architectures when given (its tensors must then be
    // there), otherwise whatever head the file holds.
    HfBertWeights& w = weights_;
    if (c.architecture == "BertForMaskedLM" || c.architecture == "BertForPreTraining") {
        w.head = HfBertHead::masked_lm;
    } else if (c.architecture == "BertForSequenceClassification") {
        w.head = HfBertHead::classifier;
    } else if (c.architecture.empty()) {
        if (table.has("cls.predictions.transform.dense.weight") || table.has("cls.predictions.bias")) {
            w.head = HfBertHead::masked_lm;
        } else if (table.has("classifier.weight")) {
            w.head = HfBertHead::classifier;
        }
    }

    w.word_embeddings = table.weight("embeddings.word_embeddings.weight", V, E, v_why);
    w.position_embeddings =
        table.matrix("embeddings.position_embeddings.weight", c.max_position_embeddings, E,
                     "config.json: max_position_embeddings = " + std::to_string(c.max_position_embeddings) +
                         ", hidden_size = " + std::to_string(E));
    w.token_type_embeddings = table.matrix("embeddings.token_type_embeddings.weight", c.type_vocab_size, E,
                                           "config.json: type_vocab_size = " + std::to_string(c.type_vocab_size) +
                                               ", hidden_size = " + std::to_string(E));
    w.embeddings_norm = table.layer_norm("embeddings.LayerNorm", E, c.layer_norm_eps, e_why);
    for (Eigen::Index l = 0; l < c.num_hidden_layers; ++l) {
        const std::string prefix = "encoder.layer." + std::to_string(l) + ".";
        HfBertLayerWeights layer;
        layer.attention.n_heads = c.num_attention_heads;
        layer.attention.q = table.linear(prefix + "attention.self.query", E, E, e_why);
        layer.attention.k = table.linear(prefix + "attention.self.key", E, E, e_why);
        layer.attention.v = table.linear(prefix + "attention.self.value", E, E, e_why);
        layer.attention.out = table.linear(prefix + "attention.output.dense", E, E, e_why);
        layer.attention.validate();
        layer.attention_norm = table.layer_norm(prefix + "attention.output.LayerNorm", E, c.layer_norm_eps, e_why);
        layer.intermediate = table.linear(prefix + "intermediate.dense", I, E, i_why);
        layer.output = table.linear(prefix + "output.dense", E, I, i_why);
        layer.output_norm = table.layer_norm(prefix + "output.LayerNorm", E, c.layer_norm_eps, e_why);
        w.layers.push_back(std::move(layer));
    }
    // BertForMaskedLM has no pooler, but checkpoints saved from BertForPreTraining
    // (bert-base-uncased) keep it: taken when stored; the classifier needs it.
    if (w.head == HfBertHead::classifier || table.has("pooler.dense.weight") || table.has("pooler.dense.bias")) {
        w.pooler = table.linear("pooler.dense", E, E, e_why);
    }

    bool decoder_is_embeddings = false;
    bool decoder_bias_repeated = false;
    bool next_sentence = false;
    const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
    if (w.head == HfBertHead::masked_lm) {
        w.transform = table.linear("cls.predictions.transform.dense", E, E, e_why);
        w.transform_norm = table.layer_norm("cls.predictions.transform.LayerNorm", E, c.layer_norm_eps, e_why);
        const std::string tied_why = v_why + "; the masked-LM decoder is tied to word_embeddings";
        if (table.has("cls.predictions.decoder.weight")) {
            w.decoder = table.weight("cls.predictions.decoder.weight", V, E, tied_why);
            // A stored copy of the word embeddings (the tied decoder) is one parameter set, not two.
            decoder_is_embeddings = w.decoder == w.word_embeddings;
            if (decoder_is_embeddings) w.decoder = WeightMatrix();
        }
        // transformers ties cls.predictions.decoder.bias to cls.predictions.bias; either may be stored.
        const std::string bias_why = "config.json: vocab_size = " + std::to_string(V);
        const bool has_decoder_bias = table.has("cls.predictions.decoder.bias");
        if (table.has("cls.predictions.bias") || !has_decoder_bias) {
            w.decoder_bias = table.vector("cls.predictions.bias", V, bias_why);
        }
        if (has_decoder_bias) {
            const Vector bias = table.vector("cls.predictions.decoder.bias", V, bias_why);
            decoder_bias_repeated = w.decoder_bias.size() != 0;
            if (decoder_bias_repeated && bias != w.decoder_bias) {
                throw Error(folder + ": tensors 'cls.predictions.bias' and 'cls.predictions.decoder.bias' differ, "
                                     "but transformers ties them (one is the other)");
            }
            w.decoder_bias = bias;
        }
        // BertForPreTraining's next-sentence head: checked and kept (for export), not run.
        next_sentence = c.architecture == "BertForPreTraining" || table.has("cls.seq_relationship.weight") ||
                        table.has("cls.seq_relationship.bias");
        if (next_sentence)
            w.seq_relationship = table.linear("cls.seq_relationship", 2, E, e_why + ", 2 classes (is next, is not)");
    } else if (w.head == HfBertHead::classifier) {
        w.classifier = table.linear("classifier", n_labels, E,
                                    e_why + ", " + std::to_string(n_labels) + (n_labels == 1 ? " label" : " labels") +
                                        " in id2label / num_labels");
        id2label_ = c.id2label;
    }

    const std::string architecture = architecture_name(c, w.head, next_sentence);
    table.check_all_taken({"embeddings.position_ids", "embeddings.token_type_ids"}, architecture);

    // The tokenizer, when the folder has vocab.txt (--tokens needs none). A
    // tokenizer_config.json asking for what WordPiece here does not do refuses --text
    // only; its vocabulary still names the tokens.
    std::string tokenizer_files = "none";
    std::error_code ec;
    if (fs::exists(dir / "vocab.txt", ec)) {
        WordPieceOptions options;
        try {
            options = read_hf_bert_tokenizer_config((dir / "tokenizer_config.json").string());
        } catch (const Error& e) {
            text_refusal_ = e.what();
        }
        tokenizer_ = WordPieceTokenizer::from_file((dir / "vocab.txt").string(), options);
        tokenizer_files =
            fs::exists(dir / "tokenizer_config.json", ec) ? "vocab.txt + tokenizer_config.json" : "vocab.txt";
        if (text_refusal_.empty()) {
            tokenizer_files += std::string(" (WordPiece, ") + (options.do_lower_case ? "lower-cased" : "cased") + ")";
        } else {
            tokenizer_files += " (labels only: --text refused)";
        }
    } else {
        text_refusal_ = folder + ": no vocab.txt (BERT's WordPiece vocabulary), so it takes --tokens, not --text";
    }

    std::string head_text = "none";
    if (w.head == HfBertHead::masked_lm) {
        head_text = "masked LM (cls.predictions), decoder ";
        head_text += w.decoder.size() != 0   ? "cls.predictions.decoder.weight"
                     : decoder_is_embeddings ? "tied to word_embeddings (cls.predictions.decoder.weight equals it)"
                                             : "tied to word_embeddings";
        if (next_sentence) head_text += "; next-sentence head cls.seq_relationship loaded, not run";
    } else if (w.head == HfBertHead::classifier) {
        head_text = "sequence classifier (pooler + classifier, " + std::to_string(n_labels) + " labels)";
    }

    info_.name = folder;
    info_.description = "Hugging Face " + architecture + " (bert: E=" + std::to_string(E) +
                        " H=" + std::to_string(c.num_attention_heads) + " L=" + std::to_string(c.num_hidden_layers) +
                        ", V=" + std::to_string(V) + ", " + std::to_string(c.max_position_embeddings) + " positions" +
                        (w.head == HfBertHead::classifier ? ", " + std::to_string(n_labels) + " labels" : "") + ")";
    info_.n_layers = c.num_hidden_layers;
    info_.n_heads = c.num_attention_heads;
    info_.width = E;
    info_.head_width = E / c.num_attention_heads;
    info_.mlp_width = I;
    info_.max_tokens = c.max_position_embeddings;
    info_.takes_text = true;
    info_.reads_ids_only = !text_refusal_.empty();
    info_.causal = false;
    info_.classifier = w.head == HfBertHead::classifier;
    info_.n_parameters = table.n_parameters() - (decoder_is_embeddings ? V * E : 0) - (decoder_bias_repeated ? V : 0);
    info_.warnings = table.warnings();
    info_.settings = {
        {"model_type", "bert"},
        {"architecture", architecture},
        {"hidden_act", c.hidden_act},
        {"layer_norm_eps", hf_number_text(c.layer_norm_eps)},
        {"vocab_size", std::to_string(V)},
        {"max_position_embeddings", std::to_string(c.max_position_embeddings)},
        {"type_vocab_size", std::to_string(c.type_vocab_size)},
        {"head", head_text},
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
    input.embeddings = layer_norm_forward(weights_.embeddings_norm, x);
    input.ids = std::move(ids);
    return input;
}

ModelInput HfBertModel::encode_text(std::string_view text) const {
    if (!text_refusal_.empty()) throw Error(text_refusal_);
    // The first "[SEP]" typed splits the text into a pair: [CLS] A [SEP] B [SEP], types 0 ... 0 1 ... 1.
    const std::size_t sep = text.find(sep_text);
    const bool pair = sep != std::string_view::npos;
    std::vector<WordPieceToken> tokens;
    std::size_t pair_offset = 0;
    if (pair) {
        if (config_.type_vocab_size < 2) {
            throw Error("text: a sentence pair ([SEP] in the text) needs token type 1, but " + info_.name +
                        " has config.json: type_vocab_size = " + std::to_string(config_.type_vocab_size));
        }
        pair_offset = sep + sep_text.size();
        tokens = tokenizer_->encode_pair(text.substr(0, sep), text.substr(pair_offset));
    } else {
        tokens = tokenizer_->encode(text, "text");
    }
    if (tokens.size() == (pair ? 3u : 2u)) throw Error("text: the sentence is empty");
    hf_check_length(tokens.size(), config_.max_position_embeddings, "text", info_.name, "max_position_embeddings");
    std::vector<std::int64_t> ids;
    std::vector<std::int32_t> type_ids;
    for (const WordPieceToken& t : tokens) {
        hf_check_text_token(t.label, t.id, config_.vocab_size, info_.name, "vocab.txt");
        ids.push_back(t.id);
        type_ids.push_back(t.type_id);
    }
    ModelInput input = embed(std::move(ids), type_ids);
    bool first_sep = true;
    for (const WordPieceToken& t : tokens) {
        input.labels.push_back(t.label);
        std::pair<std::size_t, std::size_t> span{t.begin, t.end};
        if (t.type_id == 1) {
            span = {t.begin + pair_offset, t.end + pair_offset};   // spans of B are within B
        } else if (pair && first_sep && t.id == tokenizer_->sep_id() && t.begin == sep && t.end == sep) {
            span = {sep, pair_offset};   // the [SEP] closing A is the one typed
            first_sep = false;
        }
        input.spans.push_back(span);
    }
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
    ModelTrace trace;
    AttentionOptions attention_options = hf_begin_forward(info_, input, options, trace);
    Matrix x = input.embeddings;   // [T, E], the embedding LayerNorm already applied
    for (auto l = static_cast<std::size_t>(resume_layers(info_, options, trace, x)); l < weights_.layers.size(); ++l) {
        const HfBertLayerWeights& layer = weights_.layers[l];
        note_layer_input(options, trace, x);
        set_layer_options(options, l, attention_options);
        trace.layers.push_back(attention_forward(layer.attention, x, attention_options));
        // Post-LN: the residual sum is normalised, after attention and after the MLP.
        x = layer_norm_forward(layer.attention_norm, x + trace.layers.back().output);
        Matrix hidden = linear_forward(layer.intermediate, x);   // [T, I]
        hf_activate_inplace(hidden, config_.activation);
        x = layer_norm_forward(layer.output_norm, x + linear_forward(layer.output, hidden));
    }
    trace.hidden = x;
    switch (weights_.head) {
    case HfBertHead::none: break;
    case HfBertHead::masked_lm: {
        Matrix h = linear_forward(weights_.transform, trace.hidden);   // [T, E]
        hf_activate_inplace(h, config_.activation);
        h = layer_norm_forward(weights_.transform_norm, h);
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
    if (tokenizer_ && index >= 0 && static_cast<std::size_t>(index) < tokenizer_->vocab_size()) {
        const std::string& piece = tokenizer_->token(static_cast<std::int32_t>(index));
        if (!piece.empty()) return piece;   // a blank line of vocab.txt names nothing
    }
    return std::to_string(index);
}

std::vector<OwnedTensor> HfBertModel::export_weights() const {
    const HfBertWeights& w = weights_;
    std::vector<OwnedTensor> out;
    hf_export_matrix(out, "embeddings.word_embeddings.weight", w.word_embeddings.to_matrix());
    hf_export_matrix(out, "embeddings.position_embeddings.weight", w.position_embeddings);
    hf_export_matrix(out, "embeddings.token_type_embeddings.weight", w.token_type_embeddings);
    hf_export_norm(out, "embeddings.LayerNorm", w.embeddings_norm);
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
        const HfBertLayerWeights& layer = w.layers[l];
        const std::string prefix = "encoder.layer." + std::to_string(l) + ".";
        hf_export_linear(out, prefix + "attention.self.query", layer.attention.q);
        hf_export_linear(out, prefix + "attention.self.key", layer.attention.k);
        hf_export_linear(out, prefix + "attention.self.value", layer.attention.v);
        hf_export_linear(out, prefix + "attention.output.dense", layer.attention.out);
        hf_export_norm(out, prefix + "attention.output.LayerNorm", layer.attention_norm);
        hf_export_linear(out, prefix + "intermediate.dense", layer.intermediate);
        hf_export_linear(out, prefix + "output.dense", layer.output);
        hf_export_norm(out, prefix + "output.LayerNorm", layer.output_norm);
    }
    if (w.pooler.weight.size() != 0) hf_export_linear(out, "pooler.dense", w.pooler);
    if (w.head == HfBertHead::masked_lm) {
        hf_export_linear(out, "cls.predictions.transform.dense", w.transform);
        hf_export_norm(out, "cls.predictions.transform.LayerNorm", w.transform_norm);
        hf_export_vector(out, "cls.predictions.bias", w.decoder_bias);
        if (w.decoder.size() != 0) hf_export_matrix(out, "cls.predictions.decoder.weight", w.decoder.to_matrix());
        if (w.seq_relationship.weight.size() != 0) hf_export_linear(out, "cls.seq_relationship", w.seq_relationship);
    }
    if (w.head == HfBertHead::classifier) hf_export_linear(out, "classifier", w.classifier);
    return out;
}

std::unique_ptr<Model> load_hf_bert(const std::string& folder, const LoadControl& control) {
    return std::make_unique<HfBertModel>(folder, control);
}

}   // namespace headscope
