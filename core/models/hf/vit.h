#pragma once
// Hugging Face ViT and DeiT checkpoints as a headscope Model, in plain C++:
// ViTModel / ViTForImageClassification (google/vit-*, and DINO's facebook/dino-vit*,
// which share the layout) and DeiTModel / DeiTForImageClassification /
// DeiTForImageClassificationWithTeacher (facebook/deit-*-distilled-*), as
// transformers' modeling_vit.py and modeling_deit.py compute them:
//
//   pixels [3, S, S] -> Conv2d(3, E, P, stride P) -> [N, E] patches
//   x = [CLS] (+ [DIST] for DeiT) + patches, + position_embeddings      [T, E]
//   per layer: x += Attention(LayerNorm_before(x));  x += MLP(LayerNorm_after(x))
//   hidden = LayerNorm(x); logits = classifier(hidden[0])                   [1, labels]
//   (DeiT with teacher: (cls_classifier(hidden[0]) + distillation_classifier(hidden[1])) / 2)
//
// Weights load as stored (F32, F16, BF16 or F64) with or without the "vit." / "deit."
// prefix; a missing, unknown or mis-shaped tensor is an error naming the file and both
// shapes.

#include "core/base/load_control.h"
#include "core/models/hf/image_processor.h"
#include "core/models/hf/tensors.h"
#include "core/models/model.h"
#include "core/nn/layers.h"
#include "core/nn/run_blocks.h"

#include <memory>
#include <string>
#include <vector>

namespace headscope {

// ViTConfig / DeiTConfig (model_type "vit" / "deit"). Fields absent from config.json
// take transformers' own defaults, so a file means what it means to transformers:
// those are google/vit-base-patch16-224's sizes (the smallest google/vit checkpoint;
// DeiTConfig keeps them too, although deit-tiny is smaller).
struct HfVitConfig {
    std::string model_type = "vit";          // "vit" or "deit" ([CLS] + distillation token)
    std::string architecture;                // architectures[0], or "" when absent
    Eigen::Index hidden_size = 768;          // E
    Eigen::Index num_hidden_layers = 12;     // L
    Eigen::Index num_attention_heads = 12;   // H; E % H == 0
    Eigen::Index intermediate_size = 3072;   // MLP width
    std::string hidden_act = "gelu";
    Activation activation = Activation::gelu;
    float layer_norm_eps = 1e-12f;
    int image_size = 224;   // square input side in pixels
    int patch_size = 16;    // P; image_size % P == 0
    int num_channels = 3;   // must be 3 (RGB)
    bool qkv_bias = true;
    Eigen::Index pooler_output_size = 0;   // pooler.dense rows; 0 = hidden_size
    std::vector<std::string> id2label;     // [num_labels]; "LABEL_i" where the file names none

    // Tokens before the patches: [CLS], and DeiT's distillation token.
    int n_prefix_tokens() const { return model_type == "deit" ? 2 : 1; }
    int grid_side() const { return image_size / patch_size; }
    Eigen::Index n_patches() const { return static_cast<Eigen::Index>(grid_side()) * grid_side(); }   // N
};

// Reads and validates a ViT or DeiT config.json.
HfVitConfig read_hf_vit_config(const std::string& config_path);

// One encoder layer; each member names its tensors under "encoder.layer.{l}.".

// Which classifier the checkpoint carries.
enum class HfVitHead {
    none,                      // ViTModel / DeiTModel: no logits
    classifier,                // classifier on [CLS] (ViTForImageClassification, DeiTForImageClassification)
    classifier_with_teacher,   // DeiT: (cls_classifier([CLS]) + distillation_classifier([DIST])) / 2
};

// Names are transformers' own, without the "vit." / "deit." prefix.
struct HfVitWeights {
    Vector cls_token;             // embeddings.cls_token            [1, 1, E]
    Vector distillation_token;    // embeddings.distillation_token   [1, 1, E] (DeiT)
    Matrix position_embeddings;   // embeddings.position_embeddings  [1, prefix + N, E]
    WeightMatrix patch_weight;    // embeddings.patch_embeddings.projection.weight [E, 3, P, P], as [E, 3 P P]
    Vector patch_bias;            // embeddings.patch_embeddings.projection.bias   [E]
    Stack stack;                  // encoder.layer.{l}.*, pre-LN                    [L]
    Norm layernorm;               // layernorm.weight / .bias (final)                [E]
    Linear pooler;                // pooler.dense [pooler_output_size, E] (bare models; unused here)
    HfVitHead head = HfVitHead::none;
    Linear classifier;                // classifier | cls_classifier      [labels, E] / [labels]
    Linear distillation_classifier;   // distillation_classifier         [labels, E] / [labels]
};

class HfVitModel final : public Model {
public:
    // Reads `folder`: config.json, preprocessor_config.json and the weights.
    HfVitModel(const std::string& folder, const LoadControl& control);

    const ModelInfo& info() const override { return info_; }
    using Model::encode_image;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override;
    // The picture for ImageOptions::own_resolution: shrunk to at most `max_patches`
    // patches when larger, then cut to whole patches at the right and bottom.
    RgbImage own_resolution_pixels(const RgbImage& image, int max_patches) const;
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    // Every weight as float, under transformers' names without the model prefix.
    std::vector<OwnedTensor> export_weights() const override;
    std::string output_label(Eigen::Index index) const override;   // id2label's name

    const HfVitConfig& config() const { return config_; }
    const HfImageProcessorConfig& preprocessing() const { return preprocessing_; }
    // The classifier's class names (config.json's id2label), [labels]; empty without a head.
    const std::vector<std::string>& id2label() const { return id2label_; }

private:
    // info_, once the weights and the head are read.
    void describe(const std::string& folder, const std::string& architecture, const HfTensorTable& table,
                  const HfWeights& stored);

    HfVitConfig config_;
    HfImageProcessorConfig preprocessing_;
    HfVitWeights weights_;
    HfMappedFiles mapped_;   // the files F32 weights are read from in place
    std::vector<std::string> id2label_;
    ModelInfo info_;
};

// Opens a ViT or DeiT checkpoint folder (model_type "vit" or "deit").
std::unique_ptr<Model> load_hf_vit(const std::string& folder, const LoadControl& control = {});

}   // namespace headscope
