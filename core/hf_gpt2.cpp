#include "core/hf_gpt2.h"

#include "core/hf_tensors.h"
#include "core/memory_reuse.h"
#include "core/prefix_reuse.h"

#include "core/error.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace headscope {

namespace {

namespace fs = std::filesystem;

Linear rows_of(const Linear& l, Eigen::Index first, Eigen::Index n) {
    Linear part;
    part.weight = l.weight.middle_rows(first, n);
    part.bias = l.bias.segment(first, n);
    return part;
}

}   // namespace

HfGpt2Model::HfGpt2Model(const std::string& folder, const LoadControl& control) {
    const fs::path dir(folder);
    config_ = read_hf_gpt2_config((dir / "config.json").string());
    const HfGpt2Config& c = config_;

    const HfWeights stored = HfWeights::open(folder);
    mapped_ = HfMappedFiles(stored);
    HfTensorTable table(stored, "transformer.", folder, control);

    const Eigen::Index E = c.n_embd;
    const Eigen::Index I = c.mlp_width();
    const Eigen::Index V = c.vocab_size;
    const std::string e_why = "config.json: n_embd = " + std::to_string(E);
    const std::string i_why = e_why + (c.n_inner > 0 ? ", n_inner = " : ", 4 * n_embd = ") + std::to_string(I);
    const std::string v_why = "config.json: vocab_size = " + std::to_string(V) + ", n_embd = " + std::to_string(E);

    HfGpt2Weights& w = weights_;
    w.wte = table.weight("wte.weight", V, E, v_why);
    w.wpe =
        table.weight("wpe.weight", c.n_positions, E,
                     "config.json: n_positions = " + std::to_string(c.n_positions) + ", n_embd = " + std::to_string(E));
    std::set<std::string> ignorable;
    for (Eigen::Index l = 0; l < c.n_layer; ++l) {
        const std::string prefix = "h." + std::to_string(l) + ".";
        HfGpt2LayerWeights layer;
        layer.ln_1 = table.layer_norm(prefix + "ln_1", E, c.layer_norm_epsilon, e_why);
        const Linear qkv = table.conv1d(prefix + "attn.c_attn", E, 3 * E, e_why);   // [3E, E]
        layer.attention.n_heads = c.n_head;
        layer.attention.q = rows_of(qkv, 0, E);
        layer.attention.k = rows_of(qkv, E, E);
        layer.attention.v = rows_of(qkv, 2 * E, E);
        layer.attention.qkv = qkv;   // the same memory: Q, K and V in one product
        layer.attention.out = table.conv1d(prefix + "attn.c_proj", E, E, e_why);
        layer.attention.validate();
        layer.ln_2 = table.layer_norm(prefix + "ln_2", E, c.layer_norm_epsilon, e_why);
        layer.c_fc = table.conv1d(prefix + "mlp.c_fc", E, I, i_why);
        layer.c_proj = table.conv1d(prefix + "mlp.c_proj", I, E, i_why);
        w.layers.push_back(std::move(layer));
        // The causal-mask buffers older transformers saved with the weights.
        ignorable.insert(prefix + "attn.bias");
        ignorable.insert(prefix + "attn.masked_bias");
    }
    w.ln_f = table.layer_norm("ln_f", E, c.layer_norm_epsilon, e_why);
    const bool separate_head = table.has("lm_head.weight");
    if (separate_head) w.lm_head = table.weight("lm_head.weight", V, E, v_why + " (the LM head, tied to wte)");
    // A stored copy of wte (GPT2LMHeadModel's tied head) is one parameter set, not two.
    const bool head_is_wte = separate_head && w.lm_head == w.wte;
    if (head_is_wte) w.lm_head = WeightMatrix();

    const std::string architecture =
        !c.architecture.empty() ? c.architecture : (separate_head ? "GPT2LMHeadModel" : "GPT2Model");
    table.check_all_taken(ignorable, architecture);

    // The tokenizer, when the folder has one (--tokens needs none).
    const auto exists = [&](const char* name) {
        std::error_code ec;
        return fs::exists(dir / name, ec);
    };
    if (exists("vocab.json") && exists("merges.txt")) {
        tokenizer_ = BpeTokenizer::from_files((dir / "vocab.json").string(), (dir / "merges.txt").string());
        tokenizer_files_ = "vocab.json + merges.txt";
    } else if (exists("tokenizer.json")) {
        tokenizer_ = BpeTokenizer::from_tokenizer_json((dir / "tokenizer.json").string());
        tokenizer_files_ = "tokenizer.json";
    } else {
        tokenizer_files_ = "none";
    }

    info_.name = folder;
    info_.description = "Hugging Face " + architecture + " (gpt2: E=" + std::to_string(E) +
                        " H=" + std::to_string(c.n_head) + " L=" + std::to_string(c.n_layer) +
                        ", V=" + std::to_string(V) + ", " + std::to_string(c.n_positions) + " positions)";
    info_.n_layers = c.n_layer;
    info_.n_heads = c.n_head;
    info_.width = E;
    info_.head_width = E / c.n_head;
    info_.mlp_width = I;
    info_.max_tokens = c.n_positions;
    info_.takes_text = true;
    info_.reads_ids_only = !tokenizer_;
    info_.causal = true;
    info_.n_parameters = table.n_parameters() - (head_is_wte ? V * E : 0);
    info_.warnings = table.warnings();
    info_.settings = {
        {"model_type", "gpt2"},
        {"architecture", architecture},
        {"activation_function", c.activation_function},
        {"layer_norm_epsilon", hf_number_text(c.layer_norm_epsilon)},
        {"vocab_size", std::to_string(V)},
        {"n_positions", std::to_string(c.n_positions)},
        {"lm_head", !separate_head ? "tied to wte"
                    : head_is_wte  ? "tied to wte (lm_head.weight equals it)"
                                   : "lm_head.weight"},
        {"tokenizer", tokenizer_files_},
        {"weights", stored.description()},
    };
}

ModelInput HfGpt2Model::embed(std::vector<std::int64_t> ids) const {
    mapped_.check();
    const auto T = static_cast<Eigen::Index>(ids.size());
    ModelInput input;
    input.embeddings = weights_.wpe.stored().topRows(T);
    input.embeddings += weights_.wte.gather_rows(ids);
    input.ids = std::move(ids);
    return input;
}

ModelInput HfGpt2Model::encode_text(std::string_view text) const {
    if (!tokenizer_) {
        throw Error(info_.name + ": no tokenizer files (vocab.json + merges.txt, or tokenizer.json), so it takes "
                                 "--tokens, not --text");
    }
    const std::vector<BpeToken> tokens = tokenizer_->encode(text, "text");
    if (tokens.empty()) throw Error("text: the sentence is empty");
    hf_check_length(tokens.size(), config_.n_positions, "text", info_.name, "n_positions");
    std::vector<std::int64_t> ids;
    for (const BpeToken& t : tokens) {
        hf_check_text_token(t.label, t.id, config_.vocab_size, info_.name, "tokenizer");
        ids.push_back(t.id);
    }
    ModelInput input = embed(std::move(ids));
    for (const BpeToken& t : tokens) {
        input.labels.push_back(t.label);
        input.spans.emplace_back(t.begin, t.end);
    }
    return input;
}

ModelInput HfGpt2Model::encode_ids(std::span<const std::int64_t> ids) const {
    hf_check_token_ids(ids, config_.vocab_size, config_.n_positions, info_.name, "n_positions");
    ModelInput input = embed(std::vector<std::int64_t>(ids.begin(), ids.end()));
    for (const std::int64_t id : ids) {
        const auto id32 = static_cast<std::int32_t>(id);
        input.labels.push_back(tokenizer_ && tokenizer_->has_id(id32) ? tokenizer_->label(id32) : std::to_string(id));
    }
    return input;
}

ModelTrace HfGpt2Model::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    ModelTrace trace;
    AttentionOptions attention_options = hf_begin_forward(info_, input, options, trace);
    if (options.prefix_from != nullptr)
        return forward_after_prefix(input, options, std::move(trace), attention_options);
    Matrix x = input.embeddings;   // [T, E]
    for (auto l = static_cast<std::size_t>(resume_layers(info_, options, trace, x)); l < weights_.layers.size(); ++l) {
        const HfGpt2LayerWeights& layer = weights_.layers[l];
        note_layer_input(options, trace, x);
        set_layer_options(options, l, attention_options);
        trace.layers.push_back(
            attention_forward(layer.attention, layer_norm_forward(layer.ln_1, x), attention_options));
        x += trace.layers.back().output;
        mlp_forward_inplace(layer, x);
    }
    trace.hidden = layer_norm_forward(weights_.ln_f, x);
    trace.logits = lm_logits(trace.hidden);
    return trace;
}

void HfGpt2Model::mlp_forward_inplace(const HfGpt2LayerWeights& layer, Matrix& x) const {
    Matrix hidden = linear_forward(layer.c_fc, layer_norm_forward(layer.ln_2, x));   // [T, I]
    hf_activate_inplace(hidden, config_.activation);
    x += linear_forward(layer.c_proj, hidden);
}

Matrix HfGpt2Model::lm_logits(const Matrix& hidden) const {
    const WeightMatrix& head = weights_.lm_head.size() != 0 ? weights_.lm_head : weights_.wte;   // [V, E]
    Matrix logits(hidden.rows(), head.rows());                                                   // [T, V]
    advise_huge_pages(logits.data(), static_cast<std::size_t>(logits.size()) * sizeof(float));
    head.multiply(hidden, logits);
    return logits;
}

ModelTrace HfGpt2Model::forward_after_prefix(const ModelInput& input, const RunOptions& options, ModelTrace trace,
                                             AttentionOptions attention_options) const {
    const Eigen::Index T = input.embeddings.rows();
    check_prefix_reuse(info_, options, trace.mask, T);
    const ModelTrace& kept = *options.prefix_from;
    const Eigen::Index p = options.prefix_rows;
    attention_options.keep = mask_rows_from(trace.mask, p);   // the new queries' rows
    Matrix x = input.embeddings.bottomRows(T - p);            // [T - p, E]: only the new positions
    for (std::size_t l = 0; l < weights_.layers.size(); ++l) {
        const HfGpt2LayerWeights& layer = weights_.layers[l];
        if (options.keep_layer_inputs) note_layer_input(options, trace, stack_rows(kept.layer_inputs[l], p, x));
        set_layer_options(options, l, attention_options);
        // The new positions' queries against the kept positions' keys and values and their own.
        const AttentionTrace computed =
            attention_forward_after(layer.attention, layer_norm_forward(layer.ln_1, x), kept.layers[l].keys,
                                    kept.layers[l].values, p, attention_options);
        x += computed.output;
        const TraceDetail detail = options.detail_at(static_cast<Eigen::Index>(l));
        trace.layers.push_back(join_prefix(kept.layers[l], computed, p, trace.mask, detail));
        mlp_forward_inplace(layer, x);
    }
    trace.hidden = stack_rows(kept.hidden, p, layer_norm_forward(weights_.ln_f, x));
    trace.logits = stack_rows(kept.logits, p, lm_logits(trace.hidden.bottomRows(T - p)));
    return trace;
}

std::string HfGpt2Model::output_label(Eigen::Index index) const {
    const auto id = static_cast<std::int32_t>(index);
    return tokenizer_ && tokenizer_->has_id(id) ? tokenizer_->label(id) : std::to_string(index);
}

std::vector<OwnedTensor> HfGpt2Model::export_weights() const {
    const HfGpt2Weights& w = weights_;
    std::vector<OwnedTensor> out;
    const auto add_matrix = [&](const std::string& name, const Matrix& m) {
        out.push_back({name, {m.rows(), m.cols()}, std::vector<float>(m.data(), m.data() + m.size())});
    };
    const auto add_vector = [&](const std::string& name, const Vector& v) {
        out.push_back({name, {v.size()}, std::vector<float>(v.data(), v.data() + v.size())});
    };
    const auto add_conv1d = [&](const std::string& name, const Matrix& weight, const Vector& bias) {
        add_matrix(name + ".weight", weight.transpose());
        add_vector(name + ".bias", bias);
    };
    const auto add_norm = [&](const std::string& name, const LayerNorm& n) {
        add_vector(name + ".weight", n.weight);
        add_vector(name + ".bias", n.bias);
    };
    add_matrix("wte.weight", w.wte.to_matrix());
    add_matrix("wpe.weight", w.wpe.to_matrix());
    for (std::size_t l = 0; l < w.layers.size(); ++l) {
        const HfGpt2LayerWeights& layer = w.layers[l];
        const std::string prefix = "h." + std::to_string(l) + ".";
        add_norm(prefix + "ln_1", layer.ln_1);
        const AttentionWeights& a = layer.attention;
        Matrix qkv(3 * a.q.weight.rows(), a.q.weight.cols());
        qkv << a.q.weight.to_matrix(), a.k.weight.to_matrix(), a.v.weight.to_matrix();
        Vector qkv_bias(3 * a.q.bias.size());
        qkv_bias << a.q.bias, a.k.bias, a.v.bias;
        add_conv1d(prefix + "attn.c_attn", qkv, qkv_bias);
        add_conv1d(prefix + "attn.c_proj", a.out.weight.to_matrix(), a.out.bias);
        add_norm(prefix + "ln_2", layer.ln_2);
        add_conv1d(prefix + "mlp.c_fc", layer.c_fc.weight.to_matrix(), layer.c_fc.bias);
        add_conv1d(prefix + "mlp.c_proj", layer.c_proj.weight.to_matrix(), layer.c_proj.bias);
    }
    add_norm("ln_f", w.ln_f);
    if (w.lm_head.size() != 0) add_matrix("lm_head.weight", w.lm_head.to_matrix());
    return out;
}

std::unique_ptr<Model> load_hf_gpt2(const std::string& folder, const LoadControl& control) {
    return std::make_unique<HfGpt2Model>(folder, control);
}

}   // namespace headscope
