#include "core/models/hf/tower_ends.h"

#include "core/base/error.h"
#include "core/image/grid_resize.h"
#include "core/models/hf/patch_input.h"
#include "core/models/hf/text_tokens.h"

#include <filesystem>
#include <optional>
#include <utility>

namespace headscope {

namespace {

// What vision_config says beyond the stack.
struct TowerImageSettings {
    int image_size = 224;   // S: the side the position embeddings were learned at
    int patch_size = 16;    // P
    HfImageProcessorConfig processor;

    int grid_side() const { return image_size / patch_size; }
    Eigen::Index n_patches() const { return static_cast<Eigen::Index>(grid_side()) * grid_side(); }
};

struct TowerImageWeights {
    Vector class_embedding;      // vision_model.embeddings.class_embedding  [E], where the layout has one
    WeightMatrix patch_weight;   // vision_model.embeddings.patch_embedding.weight [E, 3, P, P], as [E, 3 P P]
    Vector patch_bias;           // vision_model.embeddings.patch_embedding.bias [E], or zeros
    Matrix position_embedding;   // vision_model.embeddings.position_embedding.weight  [prefix + N, E]
    Norm pre_norm;               // TowerImageLayout::pre_norm [E], where the layout has one
};

class TowerImageEnds final : public EncoderEndsOf<TowerImageEnds> {
public:
    TowerImageEnds(TowerImageLayout layout, TowerImageSettings s) : layout_(std::move(layout)), s_(std::move(s)) {}

    template <typename Self, typename Binder>
    static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
        auto& w = self.w_;
        const Eigen::Index E = c.width;
        const Eigen::Index P = self.s_.patch_size;
        const std::string at = "vision_model.embeddings.";
        const Eigen::Index prefix = self.prefix_tokens();
        if (prefix > 0) b.vector(at + "class_embedding", w.class_embedding, E, why.e);
        b.weight(at + "patch_embedding.weight", w.patch_weight, E, 3 * P * P,
                 why.e + ", num_channels = 3, patch_size = " + std::to_string(P), {E, 3, P, P});
        if (self.layout_.patch_bias) b.vector(at + "patch_embedding.bias", w.patch_bias, E, why.e);
        b.matrix(at + "position_embedding.weight", w.position_embedding, prefix + self.s_.n_patches(), E,
                 why.e + ", (image_size / patch_size)^2 = " + std::to_string(self.s_.n_patches()) + " patches" +
                     (prefix > 0 ? " + the class embedding" : ""));
        if (!self.layout_.pre_norm.empty()) bind_norm(b, self.layout_.pre_norm, w.pre_norm, E, why.e);
    }
    template <typename Self, typename Binder>
    static void bind_head(Self&, const EncoderConfig&, const StackShapeReasons&, Binder&) {}   // the model's

    void choose_head(const EncoderConfig& c, const HfTensorTable&) override { w_.pre_norm.eps = c.norm_eps; }
    void finish_weights(const EncoderConfig& c, HfTensorTable&, const std::string&) override {
        if (!layout_.patch_bias) w_.patch_bias = Vector::Zero(c.width);
    }
    std::string architecture(const EncoderConfig&) const override { return layout_.architecture; }
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
        check_patch_input(input, info, static_cast<int>(prefix_tokens()));
    }
    Matrix logits(const Matrix&, const EncoderConfig&) const override { return {}; }

private:
    Eigen::Index prefix_tokens() const { return layout_.class_embedding ? 1 : 0; }

    TowerImageLayout layout_;
    TowerImageSettings s_;
    TowerImageWeights w_;
};

ModelInput TowerImageEnds::encode_image(const RgbImage& image, const ImageOptions& options, const std::string&) const {
    const int P = s_.patch_size;
    ModelInput input;
    input.pixels = whole_patches(options.own_resolution
                                     ? own_resolution_pixels(image, P, options.max_patches, s_.processor.resample)
                                     : hf_preprocess_pixels(image, s_.processor),
                                 P);
    const int grid_w = input.pixels.width / P;
    const int grid_h = input.pixels.height / P;
    const Matrix patches = normalized_patches(input.pixels, s_.processor, P, w_.patch_weight, w_.patch_bias);
    const Eigen::Index prefix = prefix_tokens();
    Matrix x(prefix + patches.rows(), patches.cols());   // [prefix + N, E]
    if (prefix > 0) x.row(0) = w_.class_embedding.transpose() + w_.position_embedding.row(0);
    const int side = s_.grid_side();
    const Eigen::Index N = s_.n_patches();
    // interpolate_pos_encoding keeps the stored ones for the learned number of patches of a square picture.
    const bool learned_grid = grid_w == grid_h && static_cast<Eigen::Index>(grid_w) * grid_h == N;
    x.bottomRows(patches.rows()) =
        patches + (learned_grid ? Matrix(w_.position_embedding.bottomRows(N))
                                : resize_grid_bicubic(w_.position_embedding.bottomRows(N), side, side, grid_h, grid_w));
    input.embeddings = layout_.pre_norm.empty() ? std::move(x) : norm_forward(w_.pre_norm, x);
    input.grid_width = grid_w;
    input.grid_height = grid_h;
    input.n_prefix_tokens = static_cast<int>(prefix);
    input.labels =
        patch_labels(prefix > 0 ? std::vector<std::string>{"[CLS]"} : std::vector<std::string>{}, patches.rows());
    return input;
}

struct TowerTextWeights {
    WeightMatrix token_embedding;   // text_model.embeddings.token_embedding.weight       [V, E]
    Matrix position_embedding;      // text_model.embeddings.position_embedding.weight    [max_positions, E]
};

class TowerTextEnds final : public EncoderEndsOf<TowerTextEnds> {
public:
    explicit TowerTextEnds(TowerTextLayout layout) : layout_(std::move(layout)) {}

    template <typename Self, typename Binder>
    static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
        const std::string at = "text_model.embeddings.";
        const TowerTextLayout& l = self.layout_;
        b.weight(at + "token_embedding.weight", self.w_.token_embedding, l.vocab_size, c.width,
                 why.e + ", text_config.vocab_size = " + std::to_string(l.vocab_size));
        b.matrix(at + "position_embedding.weight", self.w_.position_embedding, l.max_positions, c.width,
                 why.e + ", text_config.max_position_embeddings = " + std::to_string(l.max_positions));
    }
    template <typename Self, typename Binder>
    static void bind_head(Self&, const EncoderConfig&, const StackShapeReasons&, Binder&) {}   // the model's

    void choose_head(const EncoderConfig&, const HfTensorTable&) override {}
    void read_files(const std::string& folder) override {
        const std::filesystem::path dir(folder);
        const auto exists = [&](const char* name) {
            std::error_code ec;
            return std::filesystem::exists(dir / name, ec);
        };
        const bool sentencepiece = layout_.tokenizer == TowerTokenizer::siglip_sentencepiece;
        if (sentencepiece && exists("spiece.model")) {
            tokens_ = HfTextTokens::siglip(folder);
        } else if (exists("tokenizer.json")) {
            tokens_.emplace(folder);
        } else {
            tokens_.emplace();
            text_refusal_ = folder + ": no " + (sentencepiece ? "spiece.model" : "tokenizer.json") + " (" +
                            layout_.tokenizer_name +
                            "), so labels are given as token ids (--label-tokens, or the Labels box's ids tick)";
        }
    }
    std::string architecture(const EncoderConfig&) const override { return layout_.architecture; }
    std::string describe(ModelInfo& info, const EncoderConfig&) const override {
        info.takes_text = true;
        info.reads_ids_only = !tokens_->has_tokenizer();
        info.settings = {{"vocab_size", std::to_string(layout_.vocab_size)}, {"tokenizer", tokens_->files()}};
        return ", V=" + std::to_string(layout_.vocab_size);
    }
    ModelInput encode_text(std::string_view text, const std::string& model) const override {
        if (!text_refusal_.empty()) throw Error(text_refusal_);
        ModelInput input = tokens_->encode(text, layout_.max_positions, layout_.vocab_size, model,
                                           "text_config.max_position_embeddings");
        embed(input);
        return input;
    }
    ModelInput encode_ids(std::span<const std::int64_t> ids, const std::string& model) const override {
        hf_check_token_ids(ids, layout_.vocab_size, layout_.max_positions, model, "text_config.max_position_embeddings",
                           "text_config.vocab_size");
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

    TowerTextLayout layout_;
    TowerTextWeights w_;
    std::optional<HfTextTokens> tokens_;
    std::string text_refusal_;   // why text is refused, where it is
};

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

}   // namespace

EncoderConfig read_tower_stack(const HfFields& f, const std::string& model_type, const TowerDefaults& defaults) {
    EncoderConfig c;
    c.model_type = model_type;
    c.width = f.integer("hidden_size", defaults.width, 1, 65536);
    c.n_layers = f.integer("num_hidden_layers", defaults.n_layers, 1, 1024);
    c.n_heads = f.integer("num_attention_heads", defaults.n_heads, 1, 65536);
    c.mlp_width = f.integer("intermediate_size", defaults.mlp_width, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", defaults.hidden_act);
    c.activation = read_hf_activation(f, c.hidden_act);
    c.norm_eps = read_hf_epsilon(f, "layer_norm_eps", defaults.norm_eps);
    check_hf_head_split(f.file(), c.width, "hidden_size", c.n_heads, "num_attention_heads");
    return c;
}

const nlohmann::json& read_sub_config(const HfFields& f, const std::string& name) {
    static const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json* v = f.find(name);
    if (v == nullptr || v->is_null()) return empty;
    if (!v->is_object()) f.fail(name, "an object", *v);
    return *v;
}

std::unique_ptr<EncoderEnds> read_tower_image_ends(const HfFields& f, const std::string& folder,
                                                   const std::string& model_type, TowerImageLayout layout,
                                                   int default_image_size, int default_patch_size, EncoderConfig& c) {
    TowerImageSettings s;
    s.image_size = static_cast<int>(f.integer("image_size", default_image_size, 1, max_image_side));
    s.patch_size = static_cast<int>(f.integer("patch_size", default_patch_size, 1, max_image_side));
    if (const auto channels = f.integer("num_channels", 3, 1, 4096); channels != 3) {
        f.fail("num_channels", "expected 3 (RGB images), got " + std::to_string(channels));
    }
    if (s.image_size % s.patch_size != 0) {
        f.fail("patch_size",
               "a divisor of image_size = " + std::to_string(s.image_size) + ", got " + std::to_string(s.patch_size));
    }
    const std::string processor_path = (std::filesystem::path(folder) / "preprocessor_config.json").string();
    s.processor = read_hf_image_processor_config(processor_path, model_type);
    check_processor_output(processor_path, s.processor, s.image_size);
    c.max_tokens = (layout.class_embedding ? 1 : 0) + s.n_patches();
    return std::make_unique<TowerImageEnds>(std::move(layout), std::move(s));
}

std::unique_ptr<EncoderEnds> make_tower_text_ends(TowerTextLayout layout) {
    return std::make_unique<TowerTextEnds>(std::move(layout));
}

const EncoderFamily& image_tower_family() {
    static const EncoderFamily family{.names = tower_names("vision_model", "vision_model.post_layernorm")};
    return family;
}

const EncoderFamily& text_tower_family() {
    static const EncoderFamily family{.names = tower_names("text_model", "text_model.final_layer_norm")};
    return family;
}

}   // namespace headscope
