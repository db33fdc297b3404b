// CLIP (model_type "clip"): CLIPModel (openai/clip-vit-base-patch32, -patch16, -large-patch14,
// LAION's CLIP-ViT-*), as transformers' modeling_clip.py computes it: two towers
// (core/models/hf/tower_ends.h) read from one folder, under the zero-shot model
// (core/models/hf/zero_shot_model.h) with CLIP's head:
//   image tower: [CLS] + patches (no convolution bias) + positions, pre_layrnorm, pre-LN
//       blocks (quick GELU), post_layernorm;  image_embeds = visual_projection(x_L[0])   [P]
//   text tower: causal;  text_embeds = text_projection(x[pooled])                         [P]
//       pooled: the highest id's row where eos_token_id is 2 (the original configs, whose
//       end-of-text token is the vocabulary's last), else the first eos_token_id's
//   logits_per_image = exp(logit_scale) * cos(image_embeds, text_embeds)           [1, labels]
// With the causal mask, the rows up to the pooled one are what a padded batch gives them.
#include "core/models/hf/families/clip.h"

#include "core/base/error.h"
#include "core/models/hf/tower_ends.h"
#include "core/models/hf/zero_shot_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace headscope {

namespace {

// What the model adds on the towers: the projections into the shared space, and the scale.
struct ClipHeadWeights {
    Linear visual_projection;   // visual_projection        [projection_dim, E_image], no bias
    Linear text_projection;     // text_projection          [projection_dim, E_text], no bias
    float logit_scale = 0.0f;   // logit_scale              []: the logits are scaled by its exp
};

class ClipHead final : public ZeroShotHeadOf<ClipHead> {
public:
    ClipHead(Eigen::Index image_width, Eigen::Index text_width, Eigen::Index projection_dim, std::int64_t eos_token_id)
        : image_width_(image_width), text_width_(text_width), projection_dim_(projection_dim),
          eos_token_id_(eos_token_id) {}

    template <typename Self, typename Binder>
    static void bind_weights(Self& self, Binder& b) {
        auto& w = self.w_;
        const std::string projection = "config.json: projection_dim = " + std::to_string(self.projection_dim_);
        bind_linear(b, "visual_projection", w.visual_projection, self.projection_dim_, self.image_width_,
                    projection + ", vision_config.hidden_size = " + std::to_string(self.image_width_), false);
        bind_linear(b, "text_projection", w.text_projection, self.projection_dim_, self.text_width_,
                    projection + ", text_config.hidden_size = " + std::to_string(self.text_width_), false);
        b.scalar("logit_scale", w.logit_scale, "a number (the log of the logits' scale)");
    }

    // CLIPTextTransformer's pooled_output.
    Eigen::Index pooled_row(const std::vector<std::int64_t>& ids) const override {
        if (eos_token_id_ == 2) {   // the legacy rule: the first position of the highest id
            return static_cast<Eigen::Index>(std::max_element(ids.begin(), ids.end()) - ids.begin());
        }
        const auto eos = std::find(ids.begin(), ids.end(), eos_token_id_);
        if (eos == ids.end()) {
            throw Error("no end-of-text token (id " + std::to_string(eos_token_id_) +
                        ", text_config.eos_token_id) among its ids, whose row the label's embedding is read from");
        }
        return static_cast<Eigen::Index>(eos - ids.begin());
    }
    Matrix image_embedding(const Matrix& image_output, Matrix&) const override {
        return linear_forward(w_.visual_projection, image_output.topRows(1));   // [CLS]'s row
    }
    Matrix text_embedding(const Matrix& pooled) const override { return linear_forward(w_.text_projection, pooled); }
    float logit(float cosine) const override { return std::exp(w_.logit_scale) * cosine; }
    std::string describe(ModelInfo& info) const override {
        info.label_score = LabelScore::softmax;
        info.settings["text_eos_token_id"] = std::to_string(eos_token_id_);
        info.settings["projection_dim"] = std::to_string(projection_dim_);
        info.settings["logit_scale"] =
            hf_number_text(w_.logit_scale) + " (logits x " + hf_number_text(std::exp(w_.logit_scale)) + ")";
        return "projection " + std::to_string(projection_dim_);
    }

private:
    Eigen::Index image_width_;
    Eigen::Index text_width_;
    Eigen::Index projection_dim_;
    std::int64_t eos_token_id_;
    ClipHeadWeights w_;
};

// CLIPVisionConfig's and CLIPTextConfig's defaults (ViT-B/32's sizes).
constexpr TowerDefaults clip_image_defaults{.width = 768, .n_layers = 12, .n_heads = 12, .mlp_width = 3072};
constexpr TowerDefaults clip_text_defaults{.width = 512, .n_layers = 12, .n_heads = 8, .mlp_width = 2048};

ZeroShotSetup read_clip_config(const HfFields& f, const std::string& folder) {
    if (const std::string type = f.string("model_type", ""); type != "clip") {
        f.fail("model_type", "expected 'clip', got " + hf_quoted(type));
    }
    read_hf_architecture(f, "clip", {"CLIPModel"});
    ZeroShotSetup setup;
    setup.model_type = "clip";
    setup.architecture = "CLIPModel";
    const Eigen::Index projection_dim = f.integer("projection_dim", 512, 1, 65536);
    const HfFields vision(read_sub_config(f, "vision_config"), f.file(), "vision_config.");
    const HfFields text(read_sub_config(f, "text_config"), f.file(), "text_config.");

    EncoderConfig image = read_tower_stack(vision, "clip_vision_model", clip_image_defaults);
    auto image_ends = read_tower_image_ends(
        vision, folder, "clip",
        {.architecture = "CLIPVisionModel", .class_embedding = true, .pre_norm = "vision_model.pre_layrnorm"}, 224, 32,
        image);

    EncoderConfig words = read_tower_stack(text, "clip_text_model", clip_text_defaults);
    words.causal = true;
    const TowerTextLayout text_layout{.architecture = "CLIPTextModel",
                                      .tokenizer_name = "CLIP's tokenizer",
                                      .vocab_size = text.integer("vocab_size", 49408, 1, 1 << 24),
                                      .max_positions = text.integer("max_position_embeddings", 77, 1, 1 << 20)};
    // 2 in the original configs: pooled at the highest id.
    const std::int64_t eos_token_id = text.integer("eos_token_id", 49407, 0, text_layout.vocab_size - 1);
    setup.head = std::make_unique<ClipHead>(image.width, words.width, projection_dim, eos_token_id);
    setup.image = {std::move(image), std::move(image_ends)};
    setup.set_text_tower(std::move(words), text_layout);
    return setup;
}

}   // namespace

std::unique_ptr<Model> load_clip(const std::string& folder, const LoadControl& control) {
    return load_zero_shot_model(folder, control, read_clip_config);
}

}   // namespace headscope
