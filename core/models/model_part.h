#pragma once
// A part of a model shown as a model of its own: CLIP's text tower, opened with
// `--tower text`, is a causal text encoder whose maps, stages, disabled heads and export
// are the tower's, while the whole model it belongs to stays loaded (it owns the weights).

#include "core/models/model.h"

#include <memory>
#include <string>
#include <utility>

namespace headscope {

class ModelPart final : public Model {
public:
    // `part` belongs to `whole`; `what` names it after the whole's name ("text tower").
    ModelPart(std::unique_ptr<Model> whole, const Model& part, const std::string& what);

    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override { return part_.encode_text(text); }
    using Model::encode_image;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override {
        return part_.encode_image(image, options);
    }
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override { return part_.encode_ids(ids); }
    ModelInput encode_text_after(std::string_view text, const ModelInput& before) const override {
        return part_.encode_text_after(text, before);
    }
    ModelInput encode_ids_after(std::span<const std::int64_t> ids, const ModelInput& before) const override {
        return part_.encode_ids_after(ids, before);
    }
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override {
        return part_.forward(input, options);
    }
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return part_.head_map(trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return part_.layer_stages(trace, layer, disabled_heads, only_head);
    }
    Matrix logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const override {
        return part_.logits_rows(trace, first, n);
    }
    std::string output_label(Eigen::Index index) const override { return part_.output_label(index); }
    std::vector<OwnedTensor> export_weights() const override { return part_.export_weights(); }

private:
    std::unique_ptr<Model> whole_;
    const Model& part_;
    ModelInfo info_;
};

// The part of `whole` that `tower` names: "" the whole model itself, "text" its text tower
// (CLIP). Throws headscope::Error naming `flag` for a tower the model does not have.
std::unique_ptr<Model> model_tower(std::unique_ptr<Model> whole, const std::string& tower,
                                   const std::string& flag = "--tower");

}   // namespace headscope
