// ViT and DeiT (model_types "vit" and "deit"): ViTModel / ViTForImageClassification
// (google/vit-*, and DINO's facebook/dino-vit*, which share the layout) and DeiTModel /
// DeiTForImageClassification / DeiTForImageClassificationWithTeacher
// (facebook/deit-*-distilled-*), as transformers' modeling_vit.py and modeling_deit.py
// compute them: pre-LN blocks over
//   pixels [3, S, S] -> Conv2d(3, E, P, stride P) -> [N, E] patches
//   x = [CLS] (+ [DIST] for DeiT) + patches, + position_embeddings      [T, E]
//   hidden = layernorm(x); logits = classifier(hidden[0])                   [1, labels]
//   (DeiT with teacher: (cls_classifier(hidden[0]) + distillation_classifier(hidden[1])) / 2)
// Pictures go through the folder's image processor (preprocessor_config.json), or are
// taken at their own resolution with the position embeddings resized bicubically.
#include "core/models/hf/families/vit.h"

#include "core/base/error.h"
#include "core/image/grid_resize.h"
#include "core/models/hf/image_processor.h"
#include "core/models/hf/patch_input.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace headscope {

namespace {

// What ViTConfig / DeiTConfig say beyond the stack. Absent fields take transformers' own
// defaults, google/vit-base-patch16-224's sizes (DeiTConfig keeps them too, although
// deit-tiny is smaller).
struct VitSettings {
    bool distilled = false;                // DeiT: a distillation token [DIST] after [CLS]
    int image_size = 224;                  // square input side in pixels
    int patch_size = 16;                   // P; image_size % P == 0
    Eigen::Index pooler_output_size = 0;   // pooler.dense rows; 0 = hidden_size
    HfImageProcessorConfig processor;      // preprocessor_config.json

    // Tokens before the patches: [CLS], and DeiT's distillation token.
    int n_prefix_tokens() const { return distilled ? 2 : 1; }
    int grid_side() const { return image_size / patch_size; }
    Eigen::Index n_patches() const { return static_cast<Eigen::Index>(grid_side()) * grid_side(); }   // N
};

// Which classifier the checkpoint carries.
enum class VitHead {
    none,                      // ViTModel / DeiTModel: no logits
    classifier,                // classifier on [CLS] (ViTForImageClassification, DeiTForImageClassification)
    classifier_with_teacher,   // DeiT: (cls_classifier([CLS]) + distillation_classifier([DIST])) / 2
};

// Names are transformers' own, without the "vit." / "deit." prefix.
struct VitWeights {
    Vector cls_token;             // embeddings.cls_token            [1, 1, E]
    Vector distillation_token;    // embeddings.distillation_token   [1, 1, E] (DeiT)
    Matrix position_embeddings;   // embeddings.position_embeddings  [1, prefix + N, E]
    WeightMatrix patch_weight;    // embeddings.patch_embeddings.projection.weight [E, 3, P, P], as [E, 3 P P]
    Vector patch_bias;            // embeddings.patch_embeddings.projection.bias   [E]
    Linear pooler;                // pooler.dense [pooler_output_size, E] (bare models; unused here)
    VitHead head = VitHead::none;
    Linear classifier;                // classifier | cls_classifier      [labels, E] / [labels]
    Linear distillation_classifier;   // distillation_classifier         [labels, E] / [labels]
};

class VitEnds final : public EncoderEndsOf<VitEnds> {
public:
    explicit VitEnds(VitSettings s) : s_(std::move(s)) {}

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
    Eigen::Index rows_read(Eigen::Index T) const override;
    Matrix logits(const Matrix& hidden, const EncoderConfig& c) const override;
    std::string output_label(Eigen::Index index) const override { return class_name(id2label_, index); }

private:
    // The prefix tokens and the patches of `pixels`, each with its position: [T, E].
    void embed(const RgbImage& pixels, ModelInput& input) const;

    VitSettings s_;
    VitWeights w_;
    std::vector<std::string> id2label_;   // with a head only
};

template <typename Self, typename Binder>
void VitEnds::bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
    auto& w = self.w_;
    const VitSettings& s = self.s_;
    const Eigen::Index E = c.width;
    const Eigen::Index P = s.patch_size;
    const Eigen::Index T = s.n_prefix_tokens() + s.n_patches();
    b.vector("embeddings.cls_token", w.cls_token, E, why.e, {1, 1, E});
    if (s.distilled) b.vector("embeddings.distillation_token", w.distillation_token, E, why.e, {1, 1, E});
    b.matrix("embeddings.position_embeddings", w.position_embeddings, T, E,
             why.e + ", image_size / patch_size = " + std::to_string(s.grid_side()) + ": " +
                 std::to_string(s.n_patches()) + " patches + " + std::to_string(s.n_prefix_tokens()) +
                 (s.distilled ? " [CLS], [DIST]" : " [CLS]"),
             {1, T, E});
    b.weight("embeddings.patch_embeddings.projection.weight", w.patch_weight, E, 3 * P * P,
             why.e + ", num_channels = 3, patch_size = " + std::to_string(P), {E, 3, P, P});
    b.vector("embeddings.patch_embeddings.projection.bias", w.patch_bias, E, why.e);
}

template <typename Self, typename Binder>
void VitEnds::bind_head(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
    auto& w = self.w_;
    const Eigen::Index E = c.width;
    const bool pooler = w.pooler.weight.size() != 0;
    if (b.present("pooler.dense.weight", pooler) || b.present("pooler.dense.bias", pooler)) {
        const Eigen::Index pooled = self.s_.pooler_output_size > 0 ? self.s_.pooler_output_size : E;
        bind_linear(b, "pooler.dense", w.pooler, pooled, E, why.e + ", pooler_output_size = " + std::to_string(pooled));
    }
    const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
    const std::string label_why =
        why.e + ", " + std::to_string(n_labels) + (n_labels == 1 ? " label" : " labels") + " in id2label";
    if (w.head == VitHead::classifier) {
        bind_linear(b, "classifier", w.classifier, n_labels, E, label_why);
    } else if (w.head == VitHead::classifier_with_teacher) {
        bind_linear(b, "cls_classifier", w.classifier, n_labels, E, label_why);
        bind_linear(b, "distillation_classifier", w.distillation_classifier, n_labels, E, label_why);
    }
}

void VitEnds::choose_head(const EncoderConfig& c, const HfTensorTable& table) {
    // Without architectures, a DeiT file holding cls_classifier is the teacher model.
    const std::vector<std::string> teacher =
        s_.distilled ? std::vector<std::string>{"cls_classifier.weight"} : std::vector<std::string>{};
    w_.head = choose_encoder_head<VitHead>(
        c.architecture, table,
        {{VitHead::classifier_with_teacher, {"DeiTForImageClassificationWithTeacher"}, teacher},
         {VitHead::classifier, {"ViTForImageClassification", "DeiTForImageClassification"}, {"classifier.weight"}}},
        VitHead::none);
    if (w_.head != VitHead::none) id2label_ = c.id2label;
}

std::string VitEnds::architecture(const EncoderConfig& c) const {
    if (!c.architecture.empty()) return c.architecture;
    const std::string family = c.model_type == "deit" ? "DeiT" : "ViT";
    switch (w_.head) {
    case VitHead::none: return family + "Model";
    case VitHead::classifier: return family + "ForImageClassification";
    case VitHead::classifier_with_teacher: return family + "ForImageClassificationWithTeacher";
    }
    return family + "Model";
}

std::string VitEnds::describe(ModelInfo& info, const EncoderConfig& c) const {
    info.takes_image = true;
    info.classifier = w_.head != VitHead::none;
    info.n_outputs = w_.head != VitHead::none ? w_.classifier.weight.rows() : 0;
    info.image_size = s_.image_size;
    info.patch_size = s_.patch_size;
    info.settings = {{"qkv_bias", c.qkv_bias ? "true" : "false"}, {"labels", std::to_string(id2label_.size())}};
    for (auto& setting : processor_settings(s_.processor)) info.settings.insert(std::move(setting));
    return ", " + std::to_string(s_.image_size) + " px, P=" + std::to_string(s_.patch_size);
}

void VitEnds::embed(const RgbImage& pixels, ModelInput& input) const {
    const Matrix patches = normalized_patches(pixels, s_.processor, s_.patch_size, w_.patch_weight, w_.patch_bias);
    const int prefix = s_.n_prefix_tokens();
    input.embeddings.resize(prefix + patches.rows(), patches.cols());   // [T, E]
    input.embeddings.row(0) = w_.cls_token.transpose();
    if (s_.distilled) input.embeddings.row(1) = w_.distillation_token.transpose();
    input.embeddings.bottomRows(patches.rows()) = patches;
    const int grid_w = pixels.width / s_.patch_size;
    const int grid_h = pixels.height / s_.patch_size;
    const int side = s_.grid_side();
    input.embeddings.topRows(prefix) += w_.position_embeddings.topRows(prefix);
    if (grid_w == side && grid_h == side) {
        input.embeddings.bottomRows(patches.rows()) += w_.position_embeddings.bottomRows(patches.rows());
    } else {
        input.embeddings.bottomRows(patches.rows()) +=
            resize_grid_bicubic(w_.position_embeddings.bottomRows(s_.n_patches()), side, side, grid_h, grid_w);
    }
    input.grid_width = grid_w;
    input.grid_height = grid_h;
}

ModelInput VitEnds::encode_image(const RgbImage& image, const ImageOptions& options, const std::string& model) const {
    const RgbImage pixels =
        options.own_resolution ? own_resolution_pixels(image, s_.patch_size, options.max_patches, s_.processor.resample)
                               : hf_preprocess_pixels(image, s_.processor);
    const int S = s_.image_size;
    if (!options.own_resolution && (pixels.width != S || pixels.height != S)) {
        throw Error("image: " + std::to_string(pixels.width) + "x" + std::to_string(pixels.height) +
                    " px after preprocessing, but " + model + " takes " + std::to_string(S) + "x" + std::to_string(S) +
                    " (preprocessor_config.json resizes nothing: do_resize is false)");
    }
    ModelInput input;
    embed(pixels, input);
    input.labels =
        patch_labels(s_.distilled ? std::vector<std::string>{"[CLS]", "[DIST]"} : std::vector<std::string>{"[CLS]"},
                     input.embeddings.rows() - s_.n_prefix_tokens());
    input.n_prefix_tokens = s_.n_prefix_tokens();
    input.pixels = pixels;
    return input;
}

void VitEnds::check_input(const ModelInput& input, const ModelInfo& info) const {
    check_patch_input(input, info, s_.n_prefix_tokens());   // any patch grid (own resolution)
}

// [CLS], and DeiT's teacher the distillation row too; without a head, every row is the output.
Eigen::Index VitEnds::rows_read(Eigen::Index T) const {
    switch (w_.head) {
    case VitHead::none: return T;
    case VitHead::classifier: return 1;
    case VitHead::classifier_with_teacher: return 2;
    }
    return T;
}

Matrix VitEnds::logits(const Matrix& hidden, const EncoderConfig&) const {
    switch (w_.head) {
    case VitHead::none: break;
    case VitHead::classifier: return linear_forward(w_.classifier, hidden.topRows(1));
    case VitHead::classifier_with_teacher:
        // As transformers at inference: the mean of the [CLS] and distillation heads.
        return 0.5f * (linear_forward(w_.classifier, hidden.topRows(1)) +
                       linear_forward(w_.distillation_classifier, hidden.middleRows(1, 1)));
    }
    return {};
}

std::vector<std::string> supported_architectures(const std::string& model_type) {
    if (model_type == "deit")
        return {"DeiTModel", "DeiTForImageClassification", "DeiTForImageClassificationWithTeacher"};
    return {"ViTModel", "ViTForImageClassification"};
}

EncoderSetup read_vit_config(const HfFields& f, const std::string& folder) {
    EncoderConfig c;
    VitSettings s;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "vit" && c.model_type != "deit") {
        f.fail("model_type", "expected 'vit' or 'deit', got " + hf_quoted(c.model_type));
    }
    c.architecture = read_hf_architecture(f, c.model_type, supported_architectures(c.model_type));
    read_encoder_basics(f, c);
    c.norm_eps = read_hf_epsilon(f, "layer_norm_eps", c.norm_eps);
    s.image_size = static_cast<int>(f.integer("image_size", s.image_size, 1, max_image_side));
    s.patch_size = static_cast<int>(f.integer("patch_size", s.patch_size, 1, max_image_side));
    const auto num_channels = f.integer("num_channels", 3, 1, 4096);
    c.qkv_bias = f.boolean("qkv_bias", c.qkv_bias);
    s.pooler_output_size = f.integer("pooler_output_size", 0, 1, 1 << 20);
    c.id2label = read_hf_labels(f);
    check_hf_head_split(f.file(), c.width, "hidden_size", c.n_heads, "num_attention_heads");
    if (s.patch_size > s.image_size || s.image_size % s.patch_size != 0) {
        throw Error(f.file() + ": image_size = " + std::to_string(s.image_size) +
                    " is not a multiple of patch_size = " + std::to_string(s.patch_size));
    }
    if (num_channels != 3) f.fail("num_channels", "expected 3 (RGB images), got " + std::to_string(num_channels));
    s.distilled = c.model_type == "deit";
    c.max_tokens = s.n_prefix_tokens() + s.n_patches();   // at image_size; own-resolution grids run past it
    const std::string processor_path = (std::filesystem::path(folder) / "preprocessor_config.json").string();
    s.processor = read_hf_image_processor_config(processor_path, c.model_type);
    check_processor_output(processor_path, s.processor, s.image_size);
    return {std::move(c), std::make_unique<VitEnds>(std::move(s))};
}

}   // namespace

const EncoderFamily& vit_family() {
    static const EncoderFamily family{
        .names = {.attention_norm = "layernorm_before",
                  .q = "attention.attention.query",
                  .k = "attention.attention.key",
                  .v = "attention.attention.value",
                  .mlp_norm = "layernorm_after",
                  .final_norm = "layernorm",
                  .ignorable = {"embeddings.mask_token", "embeddings.position_ids"}},
        .read_config = read_vit_config,
    };
    return family;
}

}   // namespace headscope
