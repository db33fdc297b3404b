#include "core/models/model_registry.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/base/shown.h"
#include "core/models/assets.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/decoder.h"
#include "core/models/hf/encoder.h"
#include "core/models/hf/families/bart.h"
#include "core/models/hf/families/bert.h"
#include "core/models/hf/families/clip.h"
#include "core/models/hf/families/dinov2.h"
#include "core/models/hf/families/gemma.h"
#include "core/models/hf/families/gemma2.h"
#include "core/models/hf/families/gemma3.h"
#include "core/models/hf/families/gpt2.h"
#include "core/models/hf/families/gpt_neox.h"
#include "core/models/hf/families/llama.h"
#include "core/models/hf/families/mistral.h"
#include "core/models/hf/families/phi3.h"
#include "core/models/hf/families/qwen2.h"
#include "core/models/hf/families/qwen3.h"
#include "core/models/hf/families/siglip.h"
#include "core/models/hf/families/t5.h"
#include "core/models/hf/families/vit.h"

#include <filesystem>

namespace headscope {

namespace {

constexpr std::string_view builtin_prefix = "builtin:";

// The demo models, one row each: the built ones (ToyConfig shapes them) and the ones
// trained by tools/train_*.py (Hugging Face folders under assets/models/).
struct BuiltinRow {
    std::string_view name;   // "builtin:tiny-shapes"
    std::string_view description;
    std::unique_ptr<Model> (*make)(const ToyConfig&) = nullptr;   // built from the settings; null: trained
    std::string_view folder;                                      // trained: under assets/models/
    std::string_view script;                                      // trained: what writes the folder
};

constexpr BuiltinRow builtin_rows[] = {
    {"builtin:tiny-story",
     "GPT-2 trained here on the King James Bible, one token per byte, so per character of plain English (L=2 H=4 "
     "E=128, 128 positions); has a previous-token and an induction head",
     nullptr, "tiny-story", "tools/train_text.py"},
    {"builtin:tiny-shapes",
     "ViT trained here to name the shape in a 64 px scene (circle, square, triangle, cross, ring, star; 8 px "
     "patches, L=4 H=4 E=128)",
     nullptr, "tiny-shapes", "tools/train_vision.py"},
    {"builtin:toy-text",
     "text encoder, words + sinusoidal positions; heads built to show previous-token, same-token, first-token and "
     "local patterns (E=64 H=4 L=2)",
     make_toy_text, "", ""},
    {"builtin:toy-vit",
     "ViT-style image encoder, 16 px patches + [CLS]; heads built to show same-colour, neighbourhood, same-row and "
     "[CLS] patterns (224 px, E=64 H=4 L=2)",
     make_toy_vit, "", ""},
};

const BuiltinRow* builtin_row(std::string_view name) {
    for (const BuiltinRow& row : builtin_rows) {
        if (row.name == name) return &row;
    }
    return nullptr;
}

// A checkpoint that answers to its built-in name: `info` and errors say "builtin:tiny-shapes",
// not the folder it was read from.
class TrainedCheckpoint final : public Model {
public:
    TrainedCheckpoint(std::unique_ptr<Model> model, const BuiltinRow& trained) : model_(std::move(model)) {
        info_ = model_->info();
        info_.name = trained.name;
        info_.description = trained.description;
    }
    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override {
        return named([&] { return model_->encode_text(text); });
    }
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override {
        return named([&] { return model_->encode_image(image, options); });
    }
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override {
        return named([&] { return model_->encode_ids(ids); });
    }
    ModelInput encode_text_after(std::string_view text, const ModelInput& before) const override {
        return named([&] { return model_->encode_text_after(text, before); });
    }
    ModelInput encode_ids_after(std::span<const std::int64_t> ids, const ModelInput& before) const override {
        return named([&] { return model_->encode_ids_after(ids, before); });
    }
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override {
        return named([&] { return model_->forward(input, options); });
    }
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return named([&] { return model_->head_map(trace, layer, head); });
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return named([&] { return model_->layer_stages(trace, layer, disabled_heads, only_head); });
    }
    Matrix logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const override {
        return named([&] { return model_->logits_rows(trace, first, n); });
    }
    std::string output_label(Eigen::Index index) const override { return model_->output_label(index); }
    std::vector<OwnedTensor> export_weights() const override { return model_->export_weights(); }

private:
    // The checkpoint's errors name its folder ("more than /.../assets/models/tiny-story's
    // limit"): they are told with the name the user gave instead.
    template <typename Call>
    auto named(Call&& call) const -> decltype(call()) {
        try {
            return call();
        } catch (const Error& e) {
            std::string message = e.what();
            const std::string& folder = model_->info().name;
            for (std::size_t at = message.find(folder); !folder.empty() && at != std::string::npos;
                 at = message.find(folder, at + info_.name.size())) {
                message.replace(at, folder.size(), info_.name);
            }
            throw Error(message);
        }
    }

    std::unique_ptr<Model> model_;
    ModelInfo info_;
};

// A folder's family, by config.json's model_type; read_hf_model_type refuses (listing
// every row's types) a type no row has.
std::unique_ptr<Model> open_checkpoint_folder(const std::string& path, const LoadControl& control) {
    const std::string model_type = read_hf_model_type(path, hf_supported_model_types());
    for (const HfFamily& family : hf_families()) {
        for (const std::string_view type : family.model_types) {
            if (type == model_type) return family.load(path, control);
        }
    }
    throw Error(path + "/config.json: model_type '" + model_type + "' has no loader in this build");
}

std::unique_ptr<Model> open_trained(const BuiltinRow& trained, const LoadControl& control) {
    const std::filesystem::path folder = assets_dir() / "models" / trained.folder;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(folder / "config.json", ec)) {
        throw Error(std::string(trained.name) + ": " + (folder / "config.json").string() +
                    " is missing (set HEADSCOPE_ASSETS to the assets folder, or retrain: /usr/bin/python3 " +
                    std::string(trained.script) + ")");
    }
    return std::make_unique<TrainedCheckpoint>(open_checkpoint_folder(folder.string(), control), trained);
}

// A decoder family's loader: the one decoder over its description.
template <const DecoderFamily& (*family)()>
std::unique_ptr<Model> load_decoder(const std::string& folder, const LoadControl& control) {
    return load_hf_decoder(family(), folder, control);
}

// An encoder family's loader: the one encoder over its description.
template <const EncoderFamily& (*family)()>
std::unique_ptr<Model> load_encoder(const std::string& folder, const LoadControl& control) {
    return load_hf_encoder(family(), folder, control);
}

// An encoder-decoder family's loader: the one encoder-decoder over its description.
template <const Seq2SeqFamily& (*family)()>
std::unique_ptr<Model> load_seq2seq(const std::string& folder, const LoadControl& control) {
    return load_hf_seq2seq(family(), folder, control);
}

}   // namespace

const std::vector<HfFamily>& hf_families() {
    // One row per family (core/models/hf/<family>.h): the model_types it opens, its loader.
    static const std::vector<HfFamily> table = {
        {{"vit", "deit"},
         load_encoder<vit_family>,
         "ViT / DeiT image encoders and classifiers (ViTModel, ViTForImageClassification, DeiTModel, "
         "DeiTForImageClassification[WithTeacher])"},
        {{"dinov2", "dinov2_with_registers"},
         load_encoder<dinov2_family>,
         "DINOv2 image encoders, with or without registers (Dinov2Model, Dinov2ForImageClassification, "
         "Dinov2WithRegistersModel, Dinov2WithRegistersForImageClassification)"},
        {{"clip"}, load_clip, "CLIP image and text towers, a picture scored against labels (CLIPModel)"},
        {{"siglip"},
         load_siglip,
         "SigLIP image and text towers, a picture pooled by attention and scored against labels with a sigmoid "
         "(SiglipModel)"},
        {{"gpt2"}, load_decoder<gpt2_family>, "GPT-2 causal text models (GPT2Model, GPT2LMHeadModel)"},
        {{"bert"},
         load_encoder<bert_family>,
         "BERT text encoders (BertModel, BertForMaskedLM, BertForPreTraining, BertForSequenceClassification)"},
        {{"llama"}, load_decoder<llama_family>, "Llama 2, 3, 3.1, 3.2, TinyLlama, SmolLM (LlamaForCausalLM)"},
        {{"mistral"}, load_decoder<mistral_family>, "Mistral 7B with its sliding window (MistralForCausalLM)"},
        {{"qwen2"}, load_decoder<qwen2_family>, "Qwen2, Qwen2.5 (Qwen2ForCausalLM)"},
        {{"qwen3"}, load_decoder<qwen3_family>, "Qwen3 with q/k norms (Qwen3ForCausalLM)"},
        {{"gemma"}, load_decoder<gemma_family>, "Gemma 2B, 7B (GemmaForCausalLM)"},
        {{"gemma2"}, load_decoder<gemma2_family>, "Gemma 2, local and global layers, soft caps (Gemma2ForCausalLM)"},
        {{"gemma3_text"}, load_decoder<gemma3_family>, "Gemma 3 text models (Gemma3ForCausalLM)"},
        {{"phi3"}, load_decoder<phi3_family>, "Phi-3, Phi-3.5 mini / medium, LongRoPE (Phi3ForCausalLM)"},
        {{"gpt_neox"}, load_decoder<gpt_neox_family>, "Pythia, GPT-NeoX (GPTNeoXForCausalLM)"},
        {{"t5"},
         load_seq2seq<t5_family>,
         "T5, T5 v1.1, Flan-T5: encoder, decoder and cross-attention (T5ForConditionalGeneration)"},
        {{"bart"},
         load_seq2seq<bart_family>,
         "BART, DistilBART: encoder, decoder and cross-attention (BartForConditionalGeneration)"},
    };
    return table;
}

std::vector<std::string> hf_supported_model_types() {
    std::vector<std::string> types;
    for (const HfFamily& family : hf_families())
        types.insert(types.end(), family.model_types.begin(), family.model_types.end());
    return types;
}

std::vector<BuiltinModel> builtin_models() {
    std::vector<BuiltinModel> models;
    for (const BuiltinRow& row : builtin_rows) models.push_back({std::string(row.name), std::string(row.description)});
    return models;
}

bool is_toy_model(const std::string& name) {
    const BuiltinRow* row = builtin_row(name);
    return row != nullptr && row->make != nullptr;
}

std::unique_ptr<Model> open_model(const std::string& path, const ToyConfig& config, const LoadControl& control) {
    if (path.rfind(builtin_prefix, 0) == 0) {
        if (const BuiltinRow* row = builtin_row(path)) {
            return row->make != nullptr ? row->make(config) : open_trained(*row, control);
        }
        std::string known;
        for (const BuiltinModel& m : builtin_models()) known += (known.empty() ? "" : ", ") + m.name;
        throw Error("--model " + path + ": no such built-in model (known: " + known + ")");
    }
    // Anything else is a Hugging Face checkpoint folder, loaded by its config's model_type.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return open_checkpoint_folder(path, control);
    std::string why = std::filesystem::exists(path, ec)
                          ? "a file: give the folder holding config.json and model.safetensors"
                          : why_unreachable(path);
    if (why == "no such file") why = "no such folder";
    throw Error("--model " + shown(path) + ": not a built-in model, and not a checkpoint folder (" + why +
                "; headscope-cli models lists the built-in ones)");
}

}   // namespace headscope
