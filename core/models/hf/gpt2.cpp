#include "core/models/hf/gpt2.h"

#include "core/base/error.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"
#include "core/tensor/memory_reuse.h"
#include "core/text/tokenizer/tokenizer_folder.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace headscope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Every tensor of a GPT-2 checkpoint, once: loading, export and the parameter count.
template <typename Weights, typename Binder>
void bind_tensors(Weights& w, const HfGpt2Config& c, Binder& b) {
    const Eigen::Index E = c.n_embd;
    const Eigen::Index I = c.mlp_width();
    const Eigen::Index V = c.vocab_size;
    const std::string e_why = "config.json: n_embd = " + std::to_string(E);
    const std::string i_why = e_why + (c.n_inner > 0 ? ", n_inner = " : ", 4 * n_embd = ") + std::to_string(I);
    const std::string v_why = "config.json: vocab_size = " + std::to_string(V) + ", n_embd = " + std::to_string(E);
    b.weight("wte.weight", w.wte, V, E, v_why);
    b.weight("wpe.weight", w.wpe, c.n_positions, E,
             "config.json: n_positions = " + std::to_string(c.n_positions) + ", n_embd = " + std::to_string(E));
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        auto& block = w.stack.blocks[l];
        const std::string prefix = "h." + std::to_string(l) + ".";
        bind_norm(b, prefix + "ln_1", block.attention_norm, E, e_why);
        bind_conv1d(b, prefix + "attn.c_attn", block.attention.qkv, E, 3 * E, e_why);
        bind_conv1d(b, prefix + "attn.c_proj", block.attention.out, E, E, e_why);
        bind_norm(b, prefix + "ln_2", block.mlp_norm, E, e_why);
        bind_conv1d(b, prefix + "mlp.c_fc", block.mlp.up, E, I, i_why);
        bind_conv1d(b, prefix + "mlp.c_proj", block.mlp.down, I, E, i_why);
    }
    bind_norm(b, "ln_f", w.ln_f, E, e_why);
    if (b.present("lm_head.weight", w.lm_head.size() != 0)) {
        b.weight("lm_head.weight", w.lm_head, V, E, v_why + " (the LM head, tied to wte)");
    }
}

Linear rows_of(const Linear& l, Eigen::Index first, Eigen::Index n) {
    Linear part;
    part.weight = l.weight.middle_rows(first, n);
    part.bias = l.bias.segment(first, n);
    return part;
}

// Every layer's q, k and v as views of c_attn's rows: Q, K and V stay in one product,
// and the separate projections the reference. Returns the causal-mask buffers older
// transformers saved with the weights, which loading ignores.
std::set<std::string> split_packed_qkv(Stack& stack, Eigen::Index E) {
    std::set<std::string> ignorable;
    for (std::size_t l = 0; l < stack.blocks.size(); ++l) {
        AttentionWeights& attention = stack.blocks[l].attention;
        attention.q = rows_of(attention.qkv, 0, E);
        attention.k = rows_of(attention.qkv, E, E);
        attention.v = rows_of(attention.qkv, 2 * E, E);
        attention.validate();
        const std::string prefix = "h." + std::to_string(l) + ".";
        ignorable.insert(prefix + "attn.bias");
        ignorable.insert(prefix + "attn.masked_bias");
    }
    return ignorable;
}

}   // namespace

HfGpt2Config read_hf_gpt2_config(const std::string& config_path) {
    const json config = read_hf_json_file(config_path);
    const HfFields f(config, config_path);
    HfGpt2Config c;
    const std::string model_type = f.string("model_type", "");
    if (model_type != "gpt2") f.fail("model_type", "expected 'gpt2', got " + hf_quoted(model_type));
    c.architecture = read_hf_architecture(f, "gpt2", {"GPT2Model", "GPT2LMHeadModel"});
    c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, 1 << 24);
    c.n_positions = f.integer("n_positions", c.n_positions, 1, 1 << 20);
    c.n_embd = f.integer("n_embd", c.n_embd, 1, 65536);
    c.n_layer = f.integer("n_layer", c.n_layer, 1, 1024);
    c.n_head = f.integer("n_head", c.n_head, 1, 65536);
    c.n_inner = f.integer("n_inner", 0, 1, 1 << 20);
    c.activation_function = f.string("activation_function", c.activation_function);
    c.activation = read_hf_activation(f, c.activation_function, "activation_function");
    c.layer_norm_epsilon = read_hf_epsilon(f, "layer_norm_epsilon", c.layer_norm_epsilon);
    if (!f.boolean("scale_attn_weights", true)) {
        f.fail("scale_attn_weights", "false is not supported (scores are always divided by sqrt(head width))");
    }
    if (f.boolean("scale_attn_by_inverse_layer_idx", false)) {
        f.fail("scale_attn_by_inverse_layer_idx", "true is not supported");
    }
    check_hf_head_split(config_path, c.n_embd, "n_embd", c.n_head, "n_head");
    return c;
}

HfGpt2Model::HfGpt2Model(const std::string& folder, const LoadControl& control) {
    const fs::path dir(folder);
    config_ = read_hf_gpt2_config((dir / "config.json").string());
    const HfGpt2Config& c = config_;

    const HfWeights stored = HfWeights::open(folder);
    mapped_ = HfMappedFiles(stored);
    HfTensorTable table(stored, "transformer.", folder, control);
    HfTensorLoader loader(table);
    // GPT-2's block: pre-LN, sequential; every norm the config's epsilon.
    weights_.stack = layer_norm_stack({.causal = true}, c.n_layer, c.n_head, c.layer_norm_epsilon, c.activation);
    weights_.stack.max_tokens = c.n_positions;
    weights_.ln_f.eps = c.layer_norm_epsilon;
    bind_tensors(weights_, c, loader);
    HfGpt2Weights& w = weights_;
    const std::set<std::string> ignorable = split_packed_qkv(w.stack, c.n_embd);
    const bool separate_head = w.lm_head.size() != 0;
    // A stored copy of wte (GPT2LMHeadModel's tied head) is one parameter set, not two.
    const bool head_is_wte = separate_head && w.lm_head == w.wte;
    if (head_is_wte) w.lm_head = WeightMatrix();

    const std::string architecture =
        !c.architecture.empty() ? c.architecture : (separate_head ? "GPT2LMHeadModel" : "GPT2Model");
    table.check_all_taken(ignorable, architecture);
    read_tokenizer(dir);
    const std::string lm_head = !separate_head ? "tied to wte"
                                : head_is_wte  ? "tied to wte (lm_head.weight equals it)"
                                               : "lm_head.weight";
    describe(folder, architecture, lm_head, table, stored);
}

void HfGpt2Model::read_tokenizer(const std::filesystem::path& dir) {
    // The tokenizer, when the folder has one (--tokens needs none).
    if (auto found = tokenizer::read_folder_tokenizer(dir.string())) {
        tokenizer_.emplace(std::move(found->tokenizer));
        tokenizer_files_ = found->files;
    } else {
        tokenizer_files_ = "none";
    }
}

void HfGpt2Model::describe(const std::string& folder, const std::string& architecture, const std::string& lm_head,
                           const HfTensorTable& table, const HfWeights& stored) {
    const HfGpt2Config& c = config_;
    const Eigen::Index E = c.n_embd;
    const Eigen::Index V = c.vocab_size;
    ParameterCounter counter;
    bind_tensors(weights_, c, counter);
    info_.name = folder;
    info_.description = "Hugging Face " + architecture + " (gpt2: E=" + std::to_string(E) +
                        " H=" + std::to_string(c.n_head) + " L=" + std::to_string(c.n_layer) +
                        ", V=" + std::to_string(V) + ", " + std::to_string(c.n_positions) + " positions)";
    info_.n_layers = c.n_layer;
    info_.n_heads = c.n_head;
    info_.width = E;
    info_.head_width = E / c.n_head;
    info_.mlp_width = c.mlp_width();
    info_.max_tokens = c.n_positions;
    info_.takes_text = true;
    info_.reads_ids_only = !tokenizer_;
    info_.causal = weights_.stack.spec.causal;
    info_.n_parameters = counter.count();
    info_.warnings = table.warnings();
    info_.settings = {
        {"model_type", "gpt2"},
        {"architecture", architecture},
        {"activation_function", c.activation_function},
        {"layer_norm_epsilon", hf_number_text(c.layer_norm_epsilon)},
        {"vocab_size", std::to_string(V)},
        {"n_positions", std::to_string(c.n_positions)},
        {"lm_head", lm_head},
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
    std::vector<tokenizer::EncodedToken> tokens;
    try {
        tokens = tokenizer_->encode(text, true, "text", static_cast<std::size_t>(config_.n_positions));
    } catch (const tokenizer::TooManyTokens& e) {
        hf_check_length(e.at_least, config_.n_positions, "text", info_.name, "n_positions", true);
    }
    if (tokens.empty()) throw Error("text: the sentence is empty");
    hf_check_length(tokens.size(), config_.n_positions, "text", info_.name, "n_positions");
    std::vector<std::int64_t> ids;
    std::vector<std::int32_t> ids32;
    for (const tokenizer::EncodedToken& t : tokens) ids32.push_back(t.id);
    std::vector<std::string> labels = tokenizer_->labels(ids32);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        hf_check_text_token(labels[i], tokens[i].id, config_.vocab_size, info_.name, "tokenizer");
        ids.push_back(tokens[i].id);
    }
    ModelInput input = embed(std::move(ids));
    input.labels = std::move(labels);
    for (const tokenizer::EncodedToken& t : tokens) input.spans.emplace_back(t.begin, t.end);
    return input;
}

std::vector<std::string> HfGpt2Model::id_labels(std::span<const std::int64_t> ids) const {
    // Ids the tokenizer knows are labelled together (a run of byte tokens spells one
    // character); any other id shows as its number.
    std::vector<std::string> labels;
    std::vector<std::int32_t> known;
    const auto flush = [&] {
        if (known.empty()) return;
        for (std::string& label : tokenizer_->labels(known)) labels.push_back(std::move(label));
        known.clear();
    };
    for (const std::int64_t id : ids) {
        const auto id32 = static_cast<std::int32_t>(id);
        if (tokenizer_ && tokenizer_->has_id(id32)) {
            known.push_back(id32);
        } else {
            flush();
            labels.push_back(std::to_string(id));
        }
    }
    flush();
    return labels;
}

ModelInput HfGpt2Model::encode_ids(std::span<const std::int64_t> ids) const {
    hf_check_token_ids(ids, config_.vocab_size, config_.n_positions, info_.name, "n_positions");
    ModelInput input = embed(std::vector<std::int64_t>(ids.begin(), ids.end()));
    input.labels = id_labels(ids);
    return input;
}

ModelTrace HfGpt2Model::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    StackRun run = run_blocks(info_.name, weights_.stack, input.embeddings, options);
    run.trace.hidden = run.joined(&ModelTrace::hidden, norm_forward(weights_.ln_f, run.x));
    // The LM head for the computed rows only (a reused prefix keeps its logits).
    run.trace.logits = run.joined(&ModelTrace::logits, lm_logits(run.trace.hidden.bottomRows(run.x.rows())));
    return std::move(run.trace);
}

Matrix HfGpt2Model::lm_logits(const Matrix& hidden) const {
    const WeightMatrix& head = weights_.lm_head.size() != 0 ? weights_.lm_head : weights_.wte;   // [V, E]
    Matrix logits(hidden.rows(), head.rows());                                                   // [T, V]
    advise_huge_pages(logits.data(), static_cast<std::size_t>(logits.size()) * sizeof(float));
    head.multiply(hidden, logits);
    return logits;
}

std::string HfGpt2Model::output_label(Eigen::Index index) const {
    const auto id = static_cast<std::int32_t>(index);
    return tokenizer_ && tokenizer_->has_id(id) ? tokenizer_->labels(std::span(&id, 1)).front() : std::to_string(index);
}

std::vector<OwnedTensor> HfGpt2Model::export_weights() const {
    TensorExporter exporter;
    bind_tensors(weights_, config_, exporter);
    return exporter.take();
}

std::unique_ptr<Model> load_hf_gpt2(const std::string& folder, const LoadControl& control) {
    return std::make_unique<HfGpt2Model>(folder, control);
}

}   // namespace headscope
