#pragma once
// Hugging Face checkpoint folders: config.json and preprocessor_config.json read into
// one validated hyper-parameter struct per model family (as ggml's gpt-2 example and
// llama.cpp's llama-hparams do), and the folder's weight files (model.safetensors, or
// the shards model.safetensors.index.json lists) opened as one set of tensors.
//
// Every problem is a headscope::Error naming the file and the field or tensor, with
// what was expected and what was found.

#include "core/image/image.h"
#include "core/nn/layers.h"
#include "core/tensor/matrix.h"
#include "core/tensor/safetensors.h"
#include "core/text/wordpiece_tokenizer.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headscope {

// The model_type values this build loads, in the order error messages list them.
std::vector<std::string> hf_supported_model_types();

// Reads `folder`/config.json and returns its model_type. Throws when the file is
// missing or not a JSON object, when model_type is absent, and (one line listing the
// supported ones) when this build cannot load that type.
std::string read_hf_model_type(const std::string& folder);

// The MLP activations of Hugging Face's ACT2FN that ViT-family, GPT-2 and BERT configs name.
// The activations config.json's hidden_act / activation_function name (core/nn/layers.h):
// "gelu", "gelu_python" -> gelu; "gelu_new", "gelu_pytorch_tanh", "gelu_fast" -> gelu_tanh;
// "quick_gelu"; "relu"; "silu", "swish".
using HfActivation = Activation;

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
    HfActivation activation = HfActivation::gelu;
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

// GPT2Config (model_type "gpt2"): transformers' field names and defaults (gpt2, the
// 124M model). n_inner absent or null means 4 * n_embd.
struct HfGpt2Config {
    std::string architecture;          // architectures[0], or "" when absent
    Eigen::Index vocab_size = 50257;   // V
    Eigen::Index n_positions = 1024;   // the longest sequence
    Eigen::Index n_embd = 768;         // E
    Eigen::Index n_layer = 12;         // L
    Eigen::Index n_head = 12;          // H; E % H == 0
    Eigen::Index n_inner = 0;          // MLP width; 0 = 4 * n_embd
    std::string activation_function = "gelu_new";
    HfActivation activation = HfActivation::gelu_tanh;
    float layer_norm_epsilon = 1e-5f;

    Eigen::Index mlp_width() const { return n_inner > 0 ? n_inner : 4 * n_embd; }
};

// Reads and validates a GPT-2 config.json. Settings this build does not compute
// (scale_attn_weights false, scale_attn_by_inverse_layer_idx true) are refused.
HfGpt2Config read_hf_gpt2_config(const std::string& config_path);

// BertConfig (model_type "bert"): transformers' field names and defaults
// (bert-base-uncased). Settings this build does not compute are refused, naming the
// field: position_embedding_type other than "absolute", is_decoder, add_cross_attention.
struct HfBertConfig {
    std::string architecture;                // architectures[0], or "" when absent
    Eigen::Index vocab_size = 30522;         // V
    Eigen::Index hidden_size = 768;          // E
    Eigen::Index num_hidden_layers = 12;     // L
    Eigen::Index num_attention_heads = 12;   // H; E % H == 0
    Eigen::Index intermediate_size = 3072;   // MLP width
    std::string hidden_act = "gelu";         // "gelu" is the exact erf form
    HfActivation activation = HfActivation::gelu;
    Eigen::Index max_position_embeddings = 512;   // the longest sequence
    Eigen::Index type_vocab_size = 2;             // token types (segments A and B)
    float layer_norm_eps = 1e-12f;
    std::vector<std::string> id2label;   // [num_labels]; "LABEL_i" where the file names none
};

// Reads and validates a BERT config.json.
HfBertConfig read_hf_bert_config(const std::string& config_path);

// BertTokenizer's settings from tokenizer_config.json (do_lower_case, strip_accents,
// tokenize_chinese_chars; absent fields keep BertTokenizer's defaults, as does an
// absent file). Throws naming the file and field when a value has the wrong type, or
// when the file asks for what WordPieceTokenizer does not do (a tokenizer_class other
// than BertTokenizer / BertTokenizerFast, do_basic_tokenize false).
WordPieceOptions read_hf_bert_tokenizer_config(const std::string& path);

// ViTImageProcessor / DeiTImageProcessor settings from preprocessor_config.json:
// resize (Pillow), DeiT's centre crop, rescale, normalise. Defaults are those of the
// processor class the file names (image_processor_type or feature_extractor_type),
// or of the model type's processor when it names none.
struct HfImageProcessorConfig {
    std::string processor = "ViTImageProcessor";
    bool do_resize = true;
    int resize_width = 224;
    int resize_height = 224;
    Resample resample = Resample::bilinear;   // PIL code 2
    bool do_center_crop = false;              // DeiTImageProcessor only
    int crop_width = 224;
    int crop_height = 224;
    bool do_rescale = true;
    float rescale_factor = 1.0f / 255.0f;
    bool do_normalize = true;
    float image_mean[3] = {0.5f, 0.5f, 0.5f};
    float image_std[3] = {0.5f, 0.5f, 0.5f};
};

// Reads and validates `path` (a preprocessor_config.json); `model_type` picks the
// default processor. Throws naming the file and field.
HfImageProcessorConfig read_hf_image_processor_config(const std::string& path, const std::string& model_type);

// Hugging Face's centre crop (transformers.image_transforms.center_crop): the window
// of width x height whose top-left corner is ((W - width) // 2, (H - height) // 2)
// (floor division), padded with black where it reaches past the image.
RgbImage center_crop_image(const RgbImage& image, int width, int height);

// The weight tensors of a checkpoint folder: `model.safetensors`, or every shard that
// `model.safetensors.index.json` maps a tensor to. Each file is mapped and validated
// (core/tensor/safetensors.h); a tensor in two files, a shard that lacks a tensor the index
// puts in it, or a folder holding only PyTorch pickles is an error.
class HfWeights {
public:
    static HfWeights open(const std::string& folder);

    struct Entry {
        const TensorView* tensor = nullptr;             // valid while `owner` lives
        std::string file;                               // path of the file that holds it
        std::shared_ptr<const SafetensorsFile> owner;   // the mapped file: views of its bytes keep it
    };
    // Every tensor by its stored name.
    const std::map<std::string, Entry>& tensors() const { return tensors_; }
    // "model.safetensors" or "N shards (model-00001-of-0000N.safetensors, ...)", for messages.
    const std::string& description() const { return description_; }
    // The mapped files, for models that keep reading them (HfMappedFiles).
    const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const { return files_; }

private:
    std::vector<std::shared_ptr<const SafetensorsFile>> files_;
    std::map<std::string, Entry> tensors_;
    std::string description_;
};

}   // namespace headscope
