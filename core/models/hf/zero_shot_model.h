#pragma once
// One zero-shot model for every two-tower family (CLIP, SigLIP): an image tower and a text
// tower (tower_ends.h) read from one folder, under a head of the family's own that puts each
// tower's output into a shared space and scores a picture against labels:
//   image_embeds = head.image_embedding(image tower's output)            [P]
//   text_embeds  = head.text_embedding(label's text-tower output at head.pooled_row)  [P]
//   logits_per_image[i] = head.logit(cos(image_embeds, text_embeds_i))   [1, labels]
// Each label runs through the text tower on its own. The maps shown and the heads switched
// off are the image tower's; each label's maps are kept beside them (ModelTrace::prompt_traces).

#include "core/base/load_control.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/encoder.h"
#include "core/models/hf/tensors.h"
#include "core/models/hf/tower_ends.h"
#include "core/models/model.h"
#include "core/models/tensor_binder.h"

#include <memory>
#include <string>
#include <vector>

namespace headscope {

// What a family puts on its two towers. Its tensors are listed once (ZeroShotHeadOf).
class ZeroShotHead {
public:
    virtual ~ZeroShotHead() = default;
    virtual void bind(HfTensorLoader& b) = 0;
    virtual void bind(TensorExporter& b) const = 0;
    virtual void bind(ParameterCounter& b) const = 0;
    // After binding: views into packed tensors.
    virtual void finish_weights() {}
    // The row of a label's text-tower output its embedding is read from; throws
    // headscope::Error when the ids hold none (CLIP: no end-of-text token).
    virtual Eigen::Index pooled_row(const std::vector<std::int64_t>& ids) const = 0;
    // The picture's embedding [1, P] from the image tower's output [T, E] (after its final
    // norm); a family that pools by attention writes its probe's maps [H, T] to `probe_maps`.
    virtual Matrix image_embedding(const Matrix& image_output, Matrix& probe_maps) const = 0;
    // A label's embedding [1, P] from its pooled row [1, E_text].
    virtual Matrix text_embedding(const Matrix& pooled) const = 0;
    // The logit of a picture and a label whose embeddings' cosine is `cosine`.
    virtual float logit(float cosine) const = 0;
    // The head's part of `info` (ModelInfo::label_score, probe_heads, settings); returns what
    // the one-line description says of it ("projection 512").
    virtual std::string describe(ModelInfo& info) const = 0;
};

// The three binders' calls from a family's one list, written as
//     template <typename Self, typename Binder> static void bind_weights(Self& self, Binder& b);
template <typename Family>
class ZeroShotHeadOf : public ZeroShotHead {
public:
    void bind(HfTensorLoader& b) override { Family::bind_weights(static_cast<Family&>(*this), b); }
    void bind(TensorExporter& b) const override { Family::bind_weights(static_cast<const Family&>(*this), b); }
    void bind(ParameterCounter& b) const override { Family::bind_weights(static_cast<const Family&>(*this), b); }
};

// What a family's reader makes of config.json: both towers' stacks and ends, and the head.
struct ZeroShotSetup {
    std::string model_type;     // "clip"
    std::string architecture;   // "CLIPModel"
    EncoderSetup image;
    EncoderSetup text;
    std::unique_ptr<ZeroShotHead> head;
    Eigen::Index label_vocab_size = 0;   // text_config.vocab_size: a label's ids are checked against it

    // The text tower: `words` as read from text_config, taking at most the layout's positions.
    void set_text_tower(EncoderConfig words, TowerTextLayout layout);
};

// Opens a folder of a two-tower family whose config.json `read` reads (with the folder).
std::unique_ptr<Model> load_zero_shot_model(const std::string& folder, const LoadControl& control,
                                            ZeroShotSetup (*read)(const HfFields& f, const std::string& folder));

// The unit-length row of `embedding` [1, P].
RowVector unit_row(const Matrix& embedding);

}   // namespace headscope
