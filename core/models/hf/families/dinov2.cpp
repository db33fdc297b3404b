// DINOv2 and DINOv2 with registers (model_types "dinov2", "dinov2_with_registers"):
// Dinov2Model / Dinov2ForImageClassification (facebook/dinov2-small ... -giant and their
// -imagenet1k-1-layer heads) and their WithRegisters twins (facebook/dinov2-with-registers-*),
// as transformers' modeling_dinov2.py and modeling_dinov2_with_registers.py compute them:
//   pixels [3, S_h, S_w] -> Conv2d(3, E, 14, stride 14) -> [N, E] patches (a remainder dropped)
//   x = [CLS] + patches, + position embeddings (37 x 37 of them for 518 px, resized bicubically
//       to the picture's grid: plain for dinov2, antialiased for dinov2_with_registers)
//   registers: R learned tokens put after [CLS], with no position          [1 + R + N, E]
//   pre-LN blocks with LayerScale: x += g1 * attn(norm1(x)); x += g2 * mlp(norm2(x)), the MLP
//       GELU (fc1, fc2) or SwiGLU (giant: weights_in, weights_out)
//   hidden = layernorm(x); logits = classifier([hidden[0], mean of the patch rows])   [labels]
// Pictures go through BitImageProcessor (shortest edge 256 bicubic, centre crop 224), or are
// taken at their own resolution.
#include "core/models/hf/families/dinov2.h"

#include "core/base/error.h"
#include "core/image/grid_resize.h"
#include "core/models/hf/image_processor.h"
#include "core/models/hf/patch_input.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

namespace headscope {

namespace {

// What Dinov2Config / Dinov2WithRegistersConfig say beyond the stack.
struct Dinov2Settings {
    bool registers = false;   // dinov2_with_registers
    int n_registers = 0;      // R (num_register_tokens)
    int image_size = 224;     // the side the position embeddings were learned at
    int patch_size = 14;      // P
    HfImageProcessorConfig processor;

    int grid_side() const { return image_size / patch_size; }
    // The side of the square pictures the processor makes (its crop), else image_size.
    int input_size() const {
        const std::optional<std::pair<int, int>> out = hf_processed_size(processor);
        return out && out->first == out->second ? out->first : image_size;
    }
    Eigen::Index n_positions() const { return static_cast<Eigen::Index>(grid_side()) * grid_side(); }
};

// Names are transformers' own, without the "dinov2." / "dinov2_with_registers." prefix.
struct Dinov2Weights {
    Vector cls_token;             // embeddings.cls_token            [1, 1, E]
    Matrix register_tokens;       // embeddings.register_tokens      [1, R, E]
    Matrix position_embeddings;   // embeddings.position_embeddings  [1, 1 + (S / P)^2, E]
    WeightMatrix patch_weight;    // embeddings.patch_embeddings.projection.weight [E, 3, P, P], as [E, 3 P P]
    Vector patch_bias;            // embeddings.patch_embeddings.projection.bias   [E]
    bool classifier_head = false;
    Linear classifier;   // classifier [labels, 2E] on [CLS] and the patches' mean
};

class Dinov2Ends final : public EncoderEndsOf<Dinov2Ends> {
public:
    explicit Dinov2Ends(Dinov2Settings s) : s_(std::move(s)) {}

    template <typename Self, typename Binder>
    static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b);
    template <typename Self, typename Binder>
    static void bind_head(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b);

    void choose_head(const EncoderConfig& c, const HfTensorTable& table) override;
    std::string architecture(const EncoderConfig& c) const override;
    std::string describe(ModelInfo& info, const EncoderConfig& c) const override;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options,
                            const std::string& model) const override;
    void check_input(const ModelInput& input, const ModelInfo& info) const override;
    Matrix logits(const Matrix& hidden, const EncoderConfig& c) const override;
    std::string output_label(Eigen::Index index) const override { return class_name(id2label_, index); }

private:
    int n_prefix_tokens() const { return 1 + s_.n_registers; }
    // The position embeddings of a grid_h x grid_w grid of patches of a picture
    // `square` or not: as stored at the learned grid of a square picture, resized otherwise.
    Matrix patch_positions(int grid_h, int grid_w, bool square) const;

    Dinov2Settings s_;
    Dinov2Weights w_;
    std::vector<std::string> id2label_;   // with a head only
};

template <typename Self, typename Binder>
void Dinov2Ends::bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
    auto& w = self.w_;
    const Dinov2Settings& s = self.s_;
    const Eigen::Index E = c.width;
    const Eigen::Index P = s.patch_size;
    const Eigen::Index T = 1 + s.n_positions();
    b.vector("embeddings.cls_token", w.cls_token, E, why.e, {1, 1, E});
    b.matrix("embeddings.position_embeddings", w.position_embeddings, T, E,
             why.e + ", image_size / patch_size = " + std::to_string(s.grid_side()) + ": " +
                 std::to_string(s.n_positions()) + " patches + [CLS]",
             {1, T, E});
    if (s.registers) {
        const Eigen::Index R = s.n_registers;
        b.matrix("embeddings.register_tokens", w.register_tokens, R, E,
                 why.e + ", num_register_tokens = " + std::to_string(R), {1, R, E});
    }
    b.weight("embeddings.patch_embeddings.projection.weight", w.patch_weight, E, 3 * P * P,
             why.e + ", num_channels = 3, patch_size = " + std::to_string(P), {E, 3, P, P});
    b.vector("embeddings.patch_embeddings.projection.bias", w.patch_bias, E, why.e);
}

template <typename Self, typename Binder>
void Dinov2Ends::bind_head(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
    if (!self.w_.classifier_head) return;
    const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
    bind_linear(b, "classifier", self.w_.classifier, n_labels, 2 * c.width,
                "2 x " + why.e + " ([CLS] and the patches' mean), " + std::to_string(n_labels) +
                    (n_labels == 1 ? " label" : " labels") + " in id2label");
}

// The class names of a model_type's two kinds of checkpoint.
std::string class_stem(const std::string& model_type) {
    return model_type == "dinov2_with_registers" ? "Dinov2WithRegisters" : "Dinov2";
}

void Dinov2Ends::choose_head(const EncoderConfig& c, const HfTensorTable& table) {
    w_.classifier_head = choose_encoder_head<bool>(
        c.architecture, table, {{true, {class_stem(c.model_type) + "ForImageClassification"}, {"classifier.weight"}}},
        false);
    if (w_.classifier_head) id2label_ = c.id2label;
}

std::string Dinov2Ends::architecture(const EncoderConfig& c) const {
    if (!c.architecture.empty()) return c.architecture;
    return class_stem(c.model_type) + (w_.classifier_head ? "ForImageClassification" : "Model");
}

std::string Dinov2Ends::describe(ModelInfo& info, const EncoderConfig& c) const {
    info.takes_image = true;
    info.classifier = w_.classifier_head;
    info.n_outputs = w_.classifier_head ? w_.classifier.weight.rows() : 0;
    info.image_size = s_.input_size();
    info.patch_size = s_.patch_size;
    info.settings = {
        {"qkv_bias", c.qkv_bias ? "true" : "false"},   {"labels", std::to_string(id2label_.size())},
        {"image_size", std::to_string(s_.image_size)}, {"layer_scale", "on"},
        {"mlp", c.gated_mlp ? "SwiGLU" : "GELU"},      {"register_tokens", std::to_string(s_.n_registers)}};
    for (auto& setting : processor_settings(s_.processor)) info.settings.insert(std::move(setting));
    return ", positions learned at " + std::to_string(s_.image_size) + " px, P=" + std::to_string(s_.patch_size) +
           (s_.registers ? ", " + std::to_string(s_.n_registers) + " registers" : "");
}

Matrix Dinov2Ends::patch_positions(int grid_h, int grid_w, bool square) const {
    const int side = s_.grid_side();
    const auto stored = w_.position_embeddings.bottomRows(s_.n_positions());
    // interpolate_pos_encoding keeps the stored ones only for the learned number of patches
    // of a square picture.
    if (static_cast<Eigen::Index>(grid_h) * grid_w == s_.n_positions() && square) return stored;
    return s_.registers ? resize_grid_bicubic_antialiased(stored, side, side, grid_h, grid_w)
                        : resize_grid_bicubic(stored, side, side, grid_h, grid_w);
}

ModelInput Dinov2Ends::encode_image(const RgbImage& image, const ImageOptions& options, const std::string&) const {
    const int P = s_.patch_size;
    const RgbImage processed = options.own_resolution
                                   ? own_resolution_pixels(image, P, options.max_patches, s_.processor.resample)
                                   : hf_preprocess_pixels(image, s_.processor);
    const bool square = processed.width == processed.height;
    ModelInput input;
    input.pixels = whole_patches(processed, P);
    const int grid_w = input.pixels.width / P;
    const int grid_h = input.pixels.height / P;
    const Matrix patches = normalized_patches(input.pixels, s_.processor, P, w_.patch_weight, w_.patch_bias);
    const int prefix = n_prefix_tokens();
    input.embeddings.resize(prefix + patches.rows(), patches.cols());   // [1 + R + N, E]
    input.embeddings.row(0) = w_.cls_token.transpose() + w_.position_embeddings.row(0);
    if (s_.registers) input.embeddings.middleRows(1, s_.n_registers) = w_.register_tokens;
    input.embeddings.bottomRows(patches.rows()) = patches + patch_positions(grid_h, grid_w, square);
    input.grid_width = grid_w;
    input.grid_height = grid_h;
    input.n_prefix_tokens = prefix;
    input.n_register_tokens = s_.n_registers;
    std::vector<std::string> prefix_labels = {"[CLS]"};
    for (int r = 0; r < s_.n_registers; ++r) prefix_labels.push_back("[REG" + std::to_string(r) + "]");
    input.labels = patch_labels(std::move(prefix_labels), patches.rows());
    return input;
}

void Dinov2Ends::check_input(const ModelInput& input, const ModelInfo& info) const {
    check_patch_input(input, info, n_prefix_tokens());
}

// The classifier reads [CLS] and the mean of the patch rows (registers left out).
Matrix Dinov2Ends::logits(const Matrix& hidden, const EncoderConfig& c) const {
    if (!w_.classifier_head) return {};
    const Eigen::Index n_patches = hidden.rows() - n_prefix_tokens();
    Matrix pooled(1, 2 * c.width);   // [1, 2E]
    pooled.leftCols(c.width) = hidden.topRows(1);
    pooled.rightCols(c.width) = hidden.bottomRows(n_patches).colwise().mean();
    return linear_forward(w_.classifier, pooled);
}

EncoderSetup read_dinov2_config(const HfFields& f, const std::string& folder) {
    EncoderConfig c;
    Dinov2Settings s;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "dinov2" && c.model_type != "dinov2_with_registers") {
        f.fail("model_type", "expected 'dinov2' or 'dinov2_with_registers', got " + hf_quoted(c.model_type));
    }
    s.registers = c.model_type == "dinov2_with_registers";
    const std::string stem = class_stem(c.model_type);
    c.architecture =
        read_hf_architecture(f, c.model_type, {stem + "Model", stem + "ForImageClassification", stem + "Backbone"});
    read_encoder_basics(f, c);
    c.norm_eps = read_hf_epsilon(f, "layer_norm_eps", 1e-6f);
    c.layer_scale = true;
    c.gated_mlp = f.boolean("use_swiglu_ffn", false);
    // mlp_ratio, not intermediate_size: int(E * ratio), and for SwiGLU two thirds of it
    // rounded up to a multiple of 8 (Dinov2SwiGLUFFN).
    const double ratio = f.number("mlp_ratio", 4.0);
    if (!(ratio > 0.0) || ratio * static_cast<double>(c.width) > (1 << 20)) {
        f.fail("mlp_ratio",
               "a positive number (the MLP is int(hidden_size * mlp_ratio) wide), got " + hf_number_text(ratio));
    }
    c.mlp_width = static_cast<Eigen::Index>(static_cast<double>(c.width) * ratio);
    c.mlp_field = "hidden_size x mlp_ratio (" + hf_number_text(ratio) + ")";
    if (c.gated_mlp) {
        c.mlp_width = (static_cast<Eigen::Index>(static_cast<double>(c.mlp_width) * 2 / 3) + 7) / 8 * 8;
        c.mlp_field += " x 2/3, rounded up to 8 (use_swiglu_ffn)";
        // SwiGLU's gate is SiLU whatever hidden_act says (Dinov2SwiGLUFFN).
        c.hidden_act = "silu (SwiGLU)";
        c.activation = Activation::silu;
    }
    if (c.mlp_width < 1) f.fail("mlp_ratio", "gives an MLP of no width, got " + hf_number_text(ratio));
    s.image_size = static_cast<int>(f.integer("image_size", 224, 1, max_image_side));
    s.patch_size = static_cast<int>(f.integer("patch_size", s.registers ? 16 : 14, 1, max_image_side));
    const auto num_channels = f.integer("num_channels", 3, 1, 4096);
    c.qkv_bias = f.boolean("qkv_bias", c.qkv_bias);
    if (s.registers) s.n_registers = static_cast<int>(f.integer("num_register_tokens", 4, 0, 4096));
    c.id2label = read_hf_labels(f);
    check_hf_head_split(f.file(), c.width, "hidden_size", c.n_heads, "num_attention_heads");
    if (s.patch_size > s.image_size) {
        throw Error(f.file() + ": patch_size = " + std::to_string(s.patch_size) + " is larger than image_size = " +
                    std::to_string(s.image_size) + ", so no position embedding was learned");
    }
    if (num_channels != 3) f.fail("num_channels", "expected 3 (RGB images), got " + std::to_string(num_channels));
    const std::string processor_path = (std::filesystem::path(folder) / "preprocessor_config.json").string();
    s.processor = read_hf_image_processor_config(processor_path, c.model_type);
    // A processor whose every picture is smaller than a patch is refused here, not per picture.
    if (const auto out = hf_processed_size(s.processor); out && std::min(out->first, out->second) < s.patch_size) {
        throw Error(processor_path + ": pictures come out " + std::to_string(out->first) + "x" +
                    std::to_string(out->second) +
                    " px, smaller than one patch (config.json: patch_size = " + std::to_string(s.patch_size) + ")");
    }
    // At the processor's picture size (the crop), else image_size; other grids run too.
    const Eigen::Index side = s.input_size() / s.patch_size;
    c.max_tokens = 1 + s.n_registers + side * side;
    return {std::move(c), std::make_unique<Dinov2Ends>(std::move(s))};
}

}   // namespace

const EncoderFamily& dinov2_family() {
    static const EncoderFamily family{
        .names = {.attention_norm = "norm1",
                  .q = "attention.attention.query",
                  .k = "attention.attention.key",
                  .v = "attention.attention.value",
                  .mlp_norm = "norm2",
                  .up = "mlp.fc1",
                  .down = "mlp.fc2",
                  .packed_gate_up = "mlp.weights_in",
                  .gated_down = "mlp.weights_out",
                  .attention_scale = "layer_scale1.lambda1",
                  .mlp_scale = "layer_scale2.lambda1",
                  .final_norm = "layernorm",
                  .ignorable = {"embeddings.mask_token"}},
        .read_config = read_dinov2_config,
    };
    return family;
}

}   // namespace headscope
