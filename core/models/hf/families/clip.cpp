// CLIP (model_type "clip"): CLIPModel (openai/clip-vit-base-patch32, -patch16, -large-patch14,
// LAION's CLIP-ViT-*), as transformers' modeling_clip.py computes it: two towers of the one
// encoder, read from one folder, and a head that scores a picture against labels.
//   image tower: pixels [3, S, S] -> Conv2d(3, E, P, stride P, no bias) -> [N, E] patches
//       x = [class_embedding] + patches, + position_embedding (resized bicubically to another
//       grid, as interpolate_pos_encoding); x = pre_layrnorm(x); pre-LN blocks (quick GELU)
//       image_embeds = visual_projection(post_layernorm(x_L[0]))                       [P]
//   text tower: x = token_embedding[ids] + position_embedding[0 .. T-1]; pre-LN blocks, causal;
//       x = final_layer_norm(x); text_embeds = text_projection(x[pooled])                [P]
//       pooled: the highest id's row where eos_token_id is 2 (the original configs, whose
//       end-of-text token is the vocabulary's last), else the first eos_token_id's
//   logits_per_image = exp(logit_scale) * cos(image_embeds, text_embeds)           [1, labels]
// Each label runs through the text tower on its own: with the causal mask, the rows up to the
// pooled one are what a padded batch gives them. The maps shown and the heads switched off
// are the image tower's; each label's maps are kept beside them (ModelTrace::prompt_traces).
#include "core/models/hf/families/clip.h"

#include "core/base/error.h"
#include "core/image/grid_resize.h"
#include "core/models/hf/encoder.h"
#include "core/models/hf/image_processor.h"
#include "core/models/hf/patch_input.h"
#include "core/models/hf/text_tokens.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

namespace headscope {

namespace {

// What CLIPVisionConfig says beyond the stack.
struct ClipVisionSettings {
    int image_size = 224;   // S: the side the position embeddings were learned at
    int patch_size = 32;    // P
    HfImageProcessorConfig processor;

    int grid_side() const { return image_size / patch_size; }
    Eigen::Index n_patches() const { return static_cast<Eigen::Index>(grid_side()) * grid_side(); }
};

struct ClipVisionWeights {
    Vector class_embedding;      // vision_model.embeddings.class_embedding                [E]
    WeightMatrix patch_weight;   // vision_model.embeddings.patch_embedding.weight [E, 3, P, P], as [E, 3 P P]
    Vector patch_bias;           // zeros: the convolution has no bias
    Matrix position_embedding;   // vision_model.embeddings.position_embedding.weight  [1 + N, E]
    Norm pre_layrnorm;           // vision_model.pre_layrnorm                              [E]
};

class ClipVisionEnds final : public EncoderEndsOf<ClipVisionEnds> {
public:
    explicit ClipVisionEnds(ClipVisionSettings s) : s_(std::move(s)) {}

    template <typename Self, typename Binder>
    static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
        auto& w = self.w_;
        const Eigen::Index E = c.width;
        const Eigen::Index P = self.s_.patch_size;
        const std::string at = "vision_model.embeddings.";
        b.vector(at + "class_embedding", w.class_embedding, E, why.e);
        b.weight(at + "patch_embedding.weight", w.patch_weight, E, 3 * P * P,
                 why.e + ", num_channels = 3, patch_size = " + std::to_string(P), {E, 3, P, P});
        b.matrix(at + "position_embedding.weight", w.position_embedding, 1 + self.s_.n_patches(), E,
                 why.e + ", (image_size / patch_size)^2 = " + std::to_string(self.s_.n_patches()) +
                     " patches + the class embedding");
        bind_norm(b, "vision_model.pre_layrnorm", w.pre_layrnorm, E, why.e);
    }
    template <typename Self, typename Binder>
    static void bind_head(Self&, const EncoderConfig&, const StackShapeReasons&, Binder&) {}   // the model's

    void choose_head(const EncoderConfig&, const HfTensorTable&) override {}
    void finish_weights(const EncoderConfig& c, HfTensorTable&, const std::string&) override {
        w_.patch_bias = Vector::Zero(c.width);
    }
    std::string architecture(const EncoderConfig&) const override { return "CLIPVisionModel"; }
    std::string describe(ModelInfo& info, const EncoderConfig&) const override {
        info.takes_image = true;
        info.image_size = s_.processor.do_center_crop ? s_.processor.crop_width : s_.image_size;
        info.patch_size = s_.patch_size;
        info.settings = {{"image_size", std::to_string(s_.image_size)}};
        for (auto& setting : processor_settings(s_.processor)) info.settings.insert(std::move(setting));
        return ", S=" + std::to_string(s_.image_size) + " P=" + std::to_string(s_.patch_size);
    }
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options, const std::string&) const override;
    void check_input(const ModelInput& input, const ModelInfo& info) const override {
        check_patch_input(input, info, 1);
    }
    Matrix logits(const Matrix&, const EncoderConfig&) const override { return {}; }

private:
    ClipVisionSettings s_;
    ClipVisionWeights w_;
};

ModelInput ClipVisionEnds::encode_image(const RgbImage& image, const ImageOptions& options, const std::string&) const {
    const int P = s_.patch_size;
    ModelInput input;
    input.pixels = whole_patches(options.own_resolution
                                     ? own_resolution_pixels(image, P, options.max_patches, s_.processor.resample)
                                     : hf_preprocess_pixels(image, s_.processor),
                                 P);
    const int grid_w = input.pixels.width / P;
    const int grid_h = input.pixels.height / P;
    const Matrix patches = normalized_patches(input.pixels, s_.processor, P, w_.patch_weight, w_.patch_bias);
    Matrix x(1 + patches.rows(), patches.cols());   // [1 + N, E]
    x.row(0) = w_.class_embedding.transpose() + w_.position_embedding.row(0);
    const int side = s_.grid_side();
    // interpolate_pos_encoding keeps the stored ones for the learned number of patches of a square picture.
    const bool learned_grid = grid_w == grid_h && static_cast<Eigen::Index>(grid_w) * grid_h == s_.n_patches();
    x.bottomRows(patches.rows()) =
        patches + (learned_grid ? Matrix(w_.position_embedding.bottomRows(s_.n_patches()))
                                : resize_grid_bicubic(w_.position_embedding.bottomRows(s_.n_patches()), side, side,
                                                      grid_h, grid_w));
    input.embeddings = norm_forward(w_.pre_layrnorm, x);
    input.grid_width = grid_w;
    input.grid_height = grid_h;
    input.n_prefix_tokens = 1;
    input.labels = patch_labels({"[CLS]"}, patches.rows());
    return input;
}

// What CLIPTextConfig says beyond the stack.
struct ClipTextSettings {
    Eigen::Index vocab_size = 49408;
    Eigen::Index max_positions = 77;     // max_position_embeddings
    std::int64_t eos_token_id = 49407;   // 2 in the original configs: pooled at the highest id
};

struct ClipTextWeights {
    WeightMatrix token_embedding;   // text_model.embeddings.token_embedding.weight       [V, E]
    Matrix position_embedding;      // text_model.embeddings.position_embedding.weight    [max_positions, E]
};

class ClipTextEnds final : public EncoderEndsOf<ClipTextEnds> {
public:
    explicit ClipTextEnds(ClipTextSettings s) : s_(s) {}

    template <typename Self, typename Binder>
    static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
        const std::string at = "text_model.embeddings.";
        b.weight(at + "token_embedding.weight", self.w_.token_embedding, self.s_.vocab_size, c.width,
                 why.e + ", text_config.vocab_size = " + std::to_string(self.s_.vocab_size));
        b.matrix(at + "position_embedding.weight", self.w_.position_embedding, self.s_.max_positions, c.width,
                 why.e + ", text_config.max_position_embeddings = " + std::to_string(self.s_.max_positions));
    }
    template <typename Self, typename Binder>
    static void bind_head(Self&, const EncoderConfig&, const StackShapeReasons&, Binder&) {}   // the model's

    void choose_head(const EncoderConfig&, const HfTensorTable&) override {}
    // tokenizer.json alone: vocab.json + merges.txt would be read by GPT-2's rule, which is
    // not CLIP's (lower-casing, the end-of-word suffix).
    void read_files(const std::string& folder) override {
        std::error_code ec;
        if (std::filesystem::exists(std::filesystem::path(folder) / "tokenizer.json", ec)) {
            tokens_.emplace(folder);
        } else {
            tokens_.emplace();
            text_refusal_ = folder + ": no tokenizer.json (CLIP's tokenizer), so labels are given as token ids "
                                     "(--label-tokens, or the Labels box's ids tick)";
        }
    }
    std::string architecture(const EncoderConfig&) const override { return "CLIPTextModel"; }
    std::string describe(ModelInfo& info, const EncoderConfig&) const override {
        info.takes_text = true;
        info.reads_ids_only = !tokens_->has_tokenizer();
        info.settings = {{"vocab_size", std::to_string(s_.vocab_size)},
                         {"eos_token_id", std::to_string(s_.eos_token_id)},
                         {"tokenizer", tokens_->files()}};
        return ", V=" + std::to_string(s_.vocab_size);
    }
    ModelInput encode_text(std::string_view text, const std::string& model) const override {
        if (!text_refusal_.empty()) throw Error(text_refusal_);
        ModelInput input =
            tokens_->encode(text, s_.max_positions, s_.vocab_size, model, "text_config.max_position_embeddings");
        embed(input);
        return input;
    }
    ModelInput encode_ids(std::span<const std::int64_t> ids, const std::string& model) const override {
        hf_check_token_ids(ids, s_.vocab_size, s_.max_positions, model, "text_config.max_position_embeddings");
        ModelInput input;
        input.ids.assign(ids.begin(), ids.end());
        input.labels = tokens_->labels(ids);
        embed(input);
        return input;
    }
    Matrix logits(const Matrix&, const EncoderConfig&) const override { return {}; }

private:
    void embed(ModelInput& input) const {
        const auto T = static_cast<Eigen::Index>(input.ids.size());
        input.embeddings = w_.token_embedding.gather_rows(input.ids) + w_.position_embedding.topRows(T);
    }

    ClipTextSettings s_;
    ClipTextWeights w_;
    std::optional<HfTextTokens> tokens_;
    std::string text_refusal_;   // why text is refused, where it is
};

// The tower layouts: transformers' CLIPEncoderLayer under each tower's prefix.
EncoderTensorNames tower_names(const std::string& tower, std::string final_norm) {
    return {.layers = tower + ".encoder.layers.",
            .attention_norm = "layer_norm1",
            .q = "self_attn.q_proj",
            .k = "self_attn.k_proj",
            .v = "self_attn.v_proj",
            .out = "self_attn.out_proj",
            .mlp_norm = "layer_norm2",
            .up = "mlp.fc1",
            .down = "mlp.fc2",
            .final_norm = std::move(final_norm)};
}

const EncoderFamily& vision_tower_family() {
    static const EncoderFamily family{.names = tower_names("vision_model", "")};
    return family;
}

const EncoderFamily& text_tower_family() {
    static const EncoderFamily family{.names = tower_names("text_model", "text_model.final_layer_norm")};
    return family;
}

// A tower's stack from its part of config.json (`f`, "text_config." or "vision_config."),
// with CLIPTextConfig's / CLIPVisionConfig's defaults where a field is absent.
EncoderConfig read_tower_config(const HfFields& f, const std::string& model_type, Eigen::Index width,
                                Eigen::Index n_layers, Eigen::Index n_heads, Eigen::Index mlp_width) {
    EncoderConfig c;
    c.model_type = model_type;
    c.width = f.integer("hidden_size", width, 1, 65536);
    c.n_layers = f.integer("num_hidden_layers", n_layers, 1, 1024);
    c.n_heads = f.integer("num_attention_heads", n_heads, 1, 65536);
    c.mlp_width = f.integer("intermediate_size", mlp_width, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", "quick_gelu");
    c.activation = read_hf_activation(f, c.hidden_act);
    c.norm_eps = read_hf_epsilon(f, "layer_norm_eps", 1e-5f);
    check_hf_head_split(f.file(), c.width, "hidden_size", c.n_heads, "num_attention_heads");
    return c;
}

// Everything config.json and preprocessor_config.json say.
struct ClipConfig {
    EncoderSetup vision;
    EncoderSetup text;
    ClipTextSettings text_settings;
    Eigen::Index projection_dim = 512;
};

// A nested config (text_config / vision_config): absent or null reads as every default, as
// CLIPConfig does.
const nlohmann::json& sub_config(const HfFields& f, const std::string& name) {
    static const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json* v = f.find(name);
    if (v == nullptr) return empty;
    if (!v->is_object()) f.fail(name, "an object", *v);
    return *v;
}

EncoderSetup read_vision_config(const HfFields& f, const std::string& folder) {
    EncoderConfig c = read_tower_config(f, "clip_vision_model", 768, 12, 12, 3072);
    ClipVisionSettings s;
    s.image_size = static_cast<int>(f.integer("image_size", 224, 1, max_image_side));
    s.patch_size = static_cast<int>(f.integer("patch_size", 32, 1, max_image_side));
    if (const auto channels = f.integer("num_channels", 3, 1, 4096); channels != 3) {
        f.fail("num_channels", "expected 3 (RGB images), got " + std::to_string(channels));
    }
    if (s.image_size % s.patch_size != 0) {
        f.fail("patch_size",
               "a divisor of image_size = " + std::to_string(s.image_size) + ", got " + std::to_string(s.patch_size));
    }
    const std::string processor_path = (std::filesystem::path(folder) / "preprocessor_config.json").string();
    s.processor = read_hf_image_processor_config(processor_path, "clip");
    check_processor_output(processor_path, s.processor, s.image_size);
    c.max_tokens = 1 + s.n_patches();
    return {std::move(c), std::make_unique<ClipVisionEnds>(std::move(s))};
}

EncoderSetup read_text_config(const HfFields& f, ClipTextSettings& s) {
    EncoderConfig c = read_tower_config(f, "clip_text_model", 512, 12, 8, 2048);
    c.causal = true;
    s.vocab_size = f.integer("vocab_size", 49408, 1, 1 << 24);
    s.max_positions = f.integer("max_position_embeddings", 77, 1, 1 << 20);
    s.eos_token_id = f.integer("eos_token_id", 49407, 0, s.vocab_size - 1);
    c.max_tokens = s.max_positions;
    c.max_run_tokens = s.max_positions;
    return {std::move(c), std::make_unique<ClipTextEnds>(s)};
}

ClipConfig read_clip_config(const HfFields& f, const std::string& folder) {
    if (const std::string type = f.string("model_type", ""); type != "clip") {
        f.fail("model_type", "expected 'clip', got " + hf_quoted(type));
    }
    read_hf_architecture(f, "clip", {"CLIPModel"});
    ClipConfig config;
    config.projection_dim = f.integer("projection_dim", 512, 1, 65536);
    const HfFields vision(sub_config(f, "vision_config"), f.file(), "vision_config.");
    const HfFields text(sub_config(f, "text_config"), f.file(), "text_config.");
    config.vision = read_vision_config(vision, folder);
    config.text = read_text_config(text, config.text_settings);
    return config;
}

// The row whose output is the label's embedding: CLIPTextTransformer's pooled_output.
Eigen::Index pooled_row(const std::vector<std::int64_t>& ids, std::int64_t eos_token_id) {
    if (eos_token_id == 2) {   // the legacy rule: the first position of the highest id
        return static_cast<Eigen::Index>(std::max_element(ids.begin(), ids.end()) - ids.begin());
    }
    const auto eos = std::find(ids.begin(), ids.end(), eos_token_id);
    if (eos == ids.end()) {
        throw Error("no end-of-text token (id " + std::to_string(eos_token_id) +
                    ", text_config.eos_token_id) among its ids, whose row the label's embedding is read from");
    }
    return static_cast<Eigen::Index>(eos - ids.begin());
}

// What the model adds on the towers: the projections into the shared space, and the scale.
struct ClipHeadWeights {
    Norm post_layernorm;        // vision_model.post_layernorm   [E_image]
    Linear visual_projection;   // visual_projection        [projection_dim, E_image], no bias
    Linear text_projection;     // text_projection          [projection_dim, E_text], no bias
    float logit_scale = 0.0f;   // logit_scale              []: the logits are scaled by its exp
};

class ClipModel final : public Model {
public:
    ClipModel(const std::string& folder, const LoadControl& control);

    const ModelInfo& info() const override { return info_; }
    using Model::encode_image;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override {
        return vision_->encode_image(image, options);
    }
    ModelInput encode_label(std::string_view text) const override { return pooled(text_->encode_text(text)); }
    ModelInput encode_label_ids(std::span<const std::int64_t> ids) const override {
        return pooled(text_->encode_ids(ids));
    }
    const Model* text_tower() const override { return text_.get(); }
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return vision_->head_map(trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return vision_->layer_stages(trace, layer, disabled_heads, only_head);
    }
    std::vector<OwnedTensor> export_weights() const override;

private:
    template <typename Self, typename Binder>
    static void bind_head(Self& self, Binder& b) {
        auto& w = self.head_;
        const Eigen::Index E_image = self.vision_->info().width;
        const Eigen::Index E_text = self.text_->info().width;
        const std::string projection = "config.json: projection_dim = " + std::to_string(self.projection_dim_);
        bind_norm(b, "vision_model.post_layernorm", w.post_layernorm, E_image,
                  "config.json: vision_config.hidden_size = " + std::to_string(E_image));
        bind_linear(b, "visual_projection", w.visual_projection, self.projection_dim_, E_image,
                    projection + ", vision_config.hidden_size = " + std::to_string(E_image), false);
        bind_linear(b, "text_projection", w.text_projection, self.projection_dim_, E_text,
                    projection + ", text_config.hidden_size = " + std::to_string(E_text), false);
        b.scalar("logit_scale", w.logit_scale, "a number (the log of the logits' scale)");
    }
    void describe(const std::string& folder, const HfTensorTable& table);
    // `label`, once it is known to have the row its embedding is read from.
    ModelInput pooled(ModelInput label) const {
        pooled_row(label.ids, text_settings_.eos_token_id);
        return label;
    }
    // A tower's output row, projected into the shared space and scaled to unit length.
    static RowVector unit_embedding(const Linear& projection, const Matrix& row);

    std::unique_ptr<HfEncoderModel> vision_;
    std::unique_ptr<HfEncoderModel> text_;
    ClipTextSettings text_settings_;
    Eigen::Index projection_dim_ = 0;
    ClipHeadWeights head_;
    ModelInfo info_;
};

ClipModel::ClipModel(const std::string& folder, const LoadControl& control) {
    ClipConfig config = read_hf_config(folder, [&](const HfFields& f) { return read_clip_config(f, folder); });
    text_settings_ = config.text_settings;
    projection_dim_ = config.projection_dim;
    HfCheckpointWeights checkpoint(folder, "", control);
    vision_ = std::make_unique<HfEncoderModel>(vision_tower_family(), std::move(config.vision), checkpoint, folder);
    text_ = std::make_unique<HfEncoderModel>(text_tower_family(), std::move(config.text), checkpoint, folder);
    HfTensorLoader loader(checkpoint.table);
    bind_head(*this, loader);
    head_.post_layernorm.eps = vision_->config().norm_eps;
    checkpoint.table.check_all_taken({"vision_model.embeddings.position_ids", "text_model.embeddings.position_ids"},
                                     "CLIPModel");
    describe(folder, checkpoint.table);
    info_.settings.insert({"weights", checkpoint.stored.description()});
}

void ClipModel::describe(const std::string& folder, const HfTensorTable& table) {
    const ModelInfo& image = vision_->info();
    const ModelInfo& text = text_->info();
    info_ = image;
    info_.name = folder;
    const auto sizes = [](const ModelInfo& tower) {
        return "E=" + std::to_string(tower.width) + " H=" + std::to_string(tower.n_heads) +
               " L=" + std::to_string(tower.n_layers);
    };
    info_.description = "Hugging Face CLIPModel (clip: image tower " + sizes(image) +
                        " P=" + std::to_string(image.patch_size) + ", text tower " + sizes(text) + ", projection " +
                        std::to_string(projection_dim_) + ")";
    info_.zero_shot = true;
    info_.label_layers = text.n_layers;
    info_.label_heads = text.n_heads;
    info_.classifier = true;
    info_.n_outputs = 0;   // as many as the labels given with the picture
    info_.n_parameters =
        image.n_parameters + text.n_parameters + count_bound([&](auto& b) { bind_head(std::as_const(*this), b); });
    for (const auto& [key, value] : text.settings) {
        if (key != "weights") info_.settings["text_" + key] = value;
    }
    info_.settings["model_type"] = "clip";
    info_.settings["architecture"] = "CLIPModel";
    info_.settings["text_tower"] = sizes(text) + " I=" + std::to_string(text.mlp_width) + ", causal, up to " +
                                   std::to_string(text.max_tokens) + " tokens";
    info_.settings["projection_dim"] = std::to_string(projection_dim_);
    info_.settings["logit_scale"] =
        hf_number_text(head_.logit_scale) + " (logits x " + hf_number_text(std::exp(head_.logit_scale)) + ")";
    info_.warnings = table.warnings();
}

RowVector ClipModel::unit_embedding(const Linear& projection, const Matrix& row) {
    const Matrix embedding = linear_forward(projection, row);   // [1, projection_dim]
    return embedding.row(0) / embedding.norm();
}

ModelTrace ClipModel::forward(const ModelInput& input, const RunOptions& options) const {
    ModelTrace trace = vision_->forward(input, options);
    if (input.prompts.empty()) return trace;   // no labels: the image tower's maps alone
    const RowVector image =
        unit_embedding(head_.visual_projection, norm_forward(head_.post_layernorm, trace.hidden.topRows(1)));
    const float scale = std::exp(head_.logit_scale);
    Matrix logits(1, static_cast<Eigen::Index>(input.prompts.size()));   // [1, labels]
    // A run resumed from another on the same input (a head of the image tower toggled) has
    // the same labels, whose runs do not depend on the image tower's heads: taken as they are.
    const ModelTrace* resumed = options.resume_from;
    const bool labels_kept = resumed != nullptr && resumed->prompt_traces.size() == input.prompts.size();
    for (std::size_t i = 0; i < input.prompts.size(); ++i) {
        const ModelInput& prompt = input.prompts[i];
        // Every head of the text tower on, each map kept (a label is a few tokens).
        ModelTrace text = labels_kept ? resumed->prompt_traces[i] : text_->forward(prompt, RunOptions{});
        const Eigen::Index row = pooled_row(prompt.ids, text_settings_.eos_token_id);
        logits(0, static_cast<Eigen::Index>(i)) =
            scale * image.dot(unit_embedding(head_.text_projection, text.hidden.row(row)));
        trace.prompt_traces.push_back(std::move(text));
    }
    trace.logits = std::move(logits);
    return trace;
}

std::vector<OwnedTensor> ClipModel::export_weights() const {
    std::vector<OwnedTensor> out = vision_->export_weights();
    for (OwnedTensor& t : text_->export_weights()) out.push_back(std::move(t));
    for (OwnedTensor& t : export_bound([&](auto& b) { bind_head(*this, b); })) out.push_back(std::move(t));
    return out;
}

}   // namespace

std::unique_ptr<Model> load_clip(const std::string& folder, const LoadControl& control) {
    return std::make_unique<ClipModel>(folder, control);
}

}   // namespace headscope
