// SigLIP (model_type "siglip"): SiglipModel (google/siglip-base-patch16-224, -so400m-patch14-384,
// ...), as transformers' modeling_siglip.py computes it: two towers
// (core/models/hf/tower_ends.h) read from one folder, under the zero-shot model
// (core/models/hf/zero_shot_model.h) with SigLIP's head:
//   image tower: patches (the convolution has a bias) + positions, no [CLS]; pre-LN blocks
//       (tanh GELU); post_layernorm. SiglipMultiheadAttentionPoolingHead: a learned probe
//       attends over every row (nn.MultiheadAttention: its maps are the probe maps [H, N]),
//       y = a + mlp(layernorm(a));  image_embeds = y                                [E_image]
//   text tower: bidirectional, no mask (a label's ids run as given: SigLIP's processor pads to
//       64 with the pad id, and those pads are then ids like any other);
//       text_embeds = head(final_layer_norm(x)[T - 1])  (the last row)              [P]
//   logits_per_image = exp(logit_scale) * cos(image_embeds, text_embeds) + logit_bias,
//   each label's probability its sigmoid.
#include "core/models/hf/families/siglip.h"

#include "core/base/error.h"
#include "core/models/hf/tower_ends.h"
#include "core/models/hf/zero_shot_model.h"
#include "core/nn/layers.h"

#include <cmath>
#include <utility>

namespace headscope {

namespace {

struct SiglipHeadWeights {
    // vision_model.head: SiglipMultiheadAttentionPoolingHead
    Vector probe;                 // probe                             [1, 1, E]
    Linear in_proj;               // attention.in_proj_weight / _bias  [3E, E], [3E]: q, k, v rows
    AttentionWeights attention;   // q, k and v views of in_proj; out_proj [E, E] + bias
    Norm layernorm;               // layernorm                         [E]
    Mlp mlp;                      // mlp.fc1 [I, E], mlp.fc2 [E, I]
    Linear text_head;             // text_model.head                   [P, E_text] + bias
    Vector logit_scale;           // logit_scale [1]: the cosine's factor is its exp
    Vector logit_bias;            // logit_bias [1]
};

class SiglipHead final : public ZeroShotHeadOf<SiglipHead> {
public:
    SiglipHead(const EncoderConfig& image, Eigen::Index text_width, Eigen::Index projection_size)
        : width_(image.width), mlp_width_(image.mlp_width), text_width_(text_width), projection_(projection_size) {
        w_.attention.n_heads = image.n_heads;
        w_.layernorm.eps = image.norm_eps;
        w_.mlp.activation = image.activation;
    }

    template <typename Self, typename Binder>
    static void bind_weights(Self& self, Binder& b) {
        auto& w = self.w_;
        const Eigen::Index E = self.width_;
        const std::string e = "config.json: vision_config.hidden_size = " + std::to_string(E);
        const std::string at = "vision_model.head.";
        b.vector(at + "probe", w.probe, E, e, {1, 1, E});
        b.weight(at + "attention.in_proj_weight", w.in_proj.weight, 3 * E, E, e + " (q, k and v)");
        b.vector(at + "attention.in_proj_bias", w.in_proj.bias, 3 * E, e + " (q, k and v)");
        bind_linear(b, at + "attention.out_proj", w.attention.out, E, E, e);
        bind_norm(b, at + "layernorm", w.layernorm, E, e);
        const std::string i = e + ", vision_config.intermediate_size = " + std::to_string(self.mlp_width_);
        bind_linear(b, at + "mlp.fc1", w.mlp.up, self.mlp_width_, E, i);
        bind_linear(b, at + "mlp.fc2", w.mlp.down, E, self.mlp_width_, i);
        bind_linear(b, "text_model.head", w.text_head, self.projection_, self.text_width_,
                    "config.json: text_config.projection_size = " + std::to_string(self.projection_) +
                        ", text_config.hidden_size = " + std::to_string(self.text_width_));
        b.vector("logit_scale", w.logit_scale, 1, "one number (the log of the logits' scale)");
        b.vector("logit_bias", w.logit_bias, 1, "one number (added to every logit)");
    }
    void finish_weights() override {
        auto& w = w_;
        w.attention.q = linear_rows(w.in_proj, 0, width_);
        w.attention.k = linear_rows(w.in_proj, width_, width_);
        w.attention.v = linear_rows(w.in_proj, 2 * width_, width_);
    }

    // SiglipTextTransformer's pooled_output: the last row.
    Eigen::Index pooled_row(const std::vector<std::int64_t>& ids) const override {
        return static_cast<Eigen::Index>(ids.size()) - 1;
    }
    Matrix image_embedding(const Matrix& image_output, Matrix& probe_maps) const override {
        const AttentionTrace pooled = attention_forward(w_.attention, w_.probe.transpose(), image_output);
        probe_maps.resize(static_cast<Eigen::Index>(pooled.heads.size()), image_output.rows());
        for (std::size_t h = 0; h < pooled.heads.size(); ++h) {
            probe_maps.row(static_cast<Eigen::Index>(h)) = pooled.heads[h].weights.row(0);
        }
        return pooled.output + mlp_forward(w_.mlp, norm_forward(w_.layernorm, pooled.output));
    }
    Matrix text_embedding(const Matrix& pooled) const override { return linear_forward(w_.text_head, pooled); }
    float logit(float cosine) const override { return std::exp(w_.logit_scale(0)) * cosine + w_.logit_bias(0); }
    std::string describe(ModelInfo& info) const override {
        info.label_score = LabelScore::sigmoid;
        info.probe_heads = w_.attention.n_heads;
        info.settings["pooling"] = "attention probe, " + std::to_string(w_.attention.n_heads) + " heads";
        info.settings["projection_size"] = std::to_string(projection_);
        info.settings["logit_scale"] =
            hf_number_text(w_.logit_scale(0)) + " (logits x " + hf_number_text(std::exp(w_.logit_scale(0))) + ")";
        info.settings["logit_bias"] = hf_number_text(w_.logit_bias(0));
        return "attention-pooled, sigmoid";
    }

private:
    Eigen::Index width_;   // E: the image tower's, the probe's and the picture's embedding's
    Eigen::Index mlp_width_;
    Eigen::Index text_width_;
    Eigen::Index projection_;   // P: the label's embedding's; equals E
    SiglipHeadWeights w_;
};

// SiglipVisionConfig's and SiglipTextConfig's defaults (siglip-base-patch16-224's sizes).
constexpr TowerDefaults siglip_defaults{.hidden_act = "gelu_pytorch_tanh", .norm_eps = 1e-6f};

EncoderSetup read_siglip_image(const HfFields& f, const std::string& folder) {
    EncoderConfig c = read_tower_stack(f, "siglip_vision_model", siglip_defaults);
    if (!f.boolean("vision_use_head", true)) {
        f.fail("vision_use_head", "expected true (SiglipModel pools the picture with its attention head), got false");
    }
    auto ends = read_tower_image_ends(
        f, folder, "siglip", {.architecture = "SiglipVisionModel", .patch_bias = true, .pre_norm = ""}, 224, 16, c);
    return {std::move(c), std::move(ends)};
}

ZeroShotSetup read_siglip_config(const HfFields& f, const std::string& folder) {
    if (const std::string type = f.string("model_type", ""); type != "siglip") {
        f.fail("model_type", "expected 'siglip', got " + hf_quoted(type));
    }
    read_hf_architecture(f, "siglip", {"SiglipModel"});
    ZeroShotSetup setup;
    setup.model_type = "siglip";
    setup.architecture = "SiglipModel";
    const HfFields vision(read_sub_config(f, "vision_config"), f.file(), "vision_config.");
    const HfFields text(read_sub_config(f, "text_config"), f.file(), "text_config.");
    setup.image = read_siglip_image(vision, folder);

    EncoderConfig words = read_tower_stack(text, "siglip_text_model", siglip_defaults);
    const TowerTextLayout text_layout{.architecture = "SiglipTextModel",
                                      .tokenizer = TowerTokenizer::siglip_sentencepiece,
                                      .tokenizer_name = "SigLIP's tokenizer",
                                      .vocab_size = text.integer("vocab_size", 32000, 1, 1 << 24),
                                      .max_positions = text.integer("max_position_embeddings", 64, 1, 1 << 20)};
    const Eigen::Index image_width = setup.image.config.width;
    const Eigen::Index projection = text.integer("projection_size", words.width, 1, 65536);
    if (projection != image_width) {
        text.fail("projection_size", "expected vision_config.hidden_size = " + std::to_string(image_width) +
                                         " (a label's embedding is compared with the picture's), got " +
                                         std::to_string(projection));
    }
    setup.head = std::make_unique<SiglipHead>(setup.image.config, words.width, projection);
    setup.set_text_tower(std::move(words), text_layout);
    return setup;
}

}   // namespace

std::unique_ptr<Model> load_siglip(const std::string& folder, const LoadControl& control) {
    return load_zero_shot_model(folder, control, read_siglip_config);
}

}   // namespace headscope
