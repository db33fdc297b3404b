#include "core/models/hf/zero_shot_model.h"

#include "core/base/error.h"
#include "core/models/hf/checkpoint_load.h"

#include <utility>

namespace headscope {

namespace {

class ZeroShotModel final : public Model {
public:
    ZeroShotModel(const std::string& folder, const LoadControl& control,
                  ZeroShotSetup (*read)(const HfFields& f, const std::string& folder));

    const ModelInfo& info() const override { return info_; }
    using Model::encode_image;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override {
        return image_->encode_image(image, options);
    }
    ModelInput encode_label(std::string_view text) const override { return pooled(text_->encode_text(text)); }
    ModelInput encode_label_ids(std::span<const std::int64_t> ids) const override {
        // Checked here first: the caller names the label and the flag, not --tokens.
        hf_check_token_ids(ids, label_vocab_size_, text_->info().max_tokens, info_.name,
                           "text_config.max_position_embeddings", "text_config.vocab_size", "");
        return pooled(text_->encode_ids(ids));
    }
    const Model* text_tower() const override { return text_.get(); }
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return image_->head_map(trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return image_->layer_stages(trace, layer, disabled_heads, only_head);
    }
    std::vector<OwnedTensor> export_weights() const override;

private:
    void describe(const std::string& folder, const std::string& model_type, const std::string& architecture,
                  const HfTensorTable& table);
    // `label`, once it is known to have the row its embedding is read from.
    ModelInput pooled(ModelInput label) const {
        head_->pooled_row(label.ids);
        return label;
    }

    std::unique_ptr<HfEncoderModel> image_;
    std::unique_ptr<HfEncoderModel> text_;
    std::unique_ptr<ZeroShotHead> head_;
    Eigen::Index label_vocab_size_ = 0;
    ModelInfo info_;
};

ZeroShotModel::ZeroShotModel(const std::string& folder, const LoadControl& control,
                             ZeroShotSetup (*read)(const HfFields& f, const std::string& folder)) {
    ZeroShotSetup setup = read_hf_config(folder, [&](const HfFields& f) { return read(f, folder); });
    HfCheckpointWeights checkpoint(folder, "", control);
    image_ = std::make_unique<HfEncoderModel>(image_tower_family(), std::move(setup.image), checkpoint, folder);
    text_ = std::make_unique<HfEncoderModel>(text_tower_family(), std::move(setup.text), checkpoint, folder);
    head_ = std::move(setup.head);
    label_vocab_size_ = setup.label_vocab_size;
    HfTensorLoader loader(checkpoint.table);
    head_->bind(loader);
    head_->finish_weights();
    // The position_ids buffers older checkpoints store; the forward counts positions itself.
    checkpoint.table.check_all_taken({"vision_model.embeddings.position_ids", "text_model.embeddings.position_ids"},
                                     setup.architecture);
    describe(folder, setup.model_type, setup.architecture, checkpoint.table);
    info_.settings.insert({"weights", checkpoint.stored.description()});
}

void ZeroShotModel::describe(const std::string& folder, const std::string& model_type, const std::string& architecture,
                             const HfTensorTable& table) {
    const ModelInfo& image = image_->info();
    const ModelInfo& text = text_->info();
    info_ = image;
    info_.name = folder;
    const auto sizes = [](const ModelInfo& tower) {
        return "E=" + std::to_string(tower.width) + " H=" + std::to_string(tower.n_heads) +
               " L=" + std::to_string(tower.n_layers);
    };
    const std::string head = head_->describe(info_);
    info_.description = "Hugging Face " + architecture + " (" + model_type + ": image tower " + sizes(image) +
                        " P=" + std::to_string(image.patch_size) + ", text tower " + sizes(text) + ", " + head + ")";
    info_.zero_shot = true;
    info_.label_layers = text.n_layers;
    info_.label_heads = text.n_heads;
    info_.classifier = true;
    info_.n_outputs = 0;   // as many as the labels given with the picture
    ParameterCounter counter;
    head_->bind(counter);
    info_.n_parameters = image.n_parameters + text.n_parameters + counter.count();
    for (const auto& [key, value] : text.settings) {
        if (key != "weights") info_.settings["text_" + key] = value;
    }
    info_.settings["model_type"] = model_type;
    info_.settings["architecture"] = architecture;
    info_.settings["text_tower"] = sizes(text) + " I=" + std::to_string(text.mlp_width) + ", " +
                                   (text.causal ? "causal" : "bidirectional") + ", up to " +
                                   std::to_string(text.max_tokens) + " tokens";
    info_.warnings = table.warnings();
}

ModelTrace ZeroShotModel::forward(const ModelInput& input, const RunOptions& options) const {
    ModelTrace trace = image_->forward(input, options);
    // Without labels too: the picture's pooling (SigLIP's probe maps) is shown.
    const RowVector image = unit_row(head_->image_embedding(trace.hidden, trace.probe_maps));
    if (input.prompts.empty()) return trace;
    Matrix logits(1, static_cast<Eigen::Index>(input.prompts.size()));   // [1, labels]
    // A run resumed from another on the same input (a head of the image tower toggled) has
    // the same labels, whose runs do not depend on the image tower's heads: taken as they are.
    const ModelTrace* resumed = options.resume_from;
    const bool labels_kept = resumed != nullptr && resumed->prompt_traces.size() == input.prompts.size();
    for (std::size_t i = 0; i < input.prompts.size(); ++i) {
        const ModelInput& prompt = input.prompts[i];
        // Every head of the text tower on, each map kept (a label is a few tokens).
        ModelTrace text = labels_kept ? resumed->prompt_traces[i] : text_->forward(prompt, RunOptions{});
        const Eigen::Index row = head_->pooled_row(prompt.ids);
        const RowVector label = unit_row(head_->text_embedding(text.hidden.row(row)));
        logits(0, static_cast<Eigen::Index>(i)) = head_->logit(image.dot(label));
        trace.prompt_traces.push_back(std::move(text));
    }
    trace.logits = std::move(logits);
    return trace;
}

std::vector<OwnedTensor> ZeroShotModel::export_weights() const {
    std::vector<OwnedTensor> out = image_->export_weights();
    for (OwnedTensor& t : text_->export_weights()) out.push_back(std::move(t));
    TensorExporter exporter;
    head_->bind(exporter);
    for (OwnedTensor& t : exporter.take()) out.push_back(std::move(t));
    return out;
}

}   // namespace

std::unique_ptr<Model> load_zero_shot_model(const std::string& folder, const LoadControl& control,
                                            ZeroShotSetup (*read)(const HfFields& f, const std::string& folder)) {
    return std::make_unique<ZeroShotModel>(folder, control, read);
}

void ZeroShotSetup::set_text_tower(EncoderConfig words, TowerTextLayout layout) {
    words.max_tokens = words.max_run_tokens = layout.max_positions;
    label_vocab_size = layout.vocab_size;
    text = {std::move(words), make_tower_text_ends(std::move(layout))};
}

RowVector unit_row(const Matrix& embedding) { return embedding.row(0) / embedding.norm(); }

}   // namespace headscope
