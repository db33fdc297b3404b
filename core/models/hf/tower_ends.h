#pragma once
// The towers of a two-tower checkpoint (CLIP, SigLIP): each is the one encoder (encoder.h)
// under its prefix, layers named as CLIPEncoderLayer and SiglipEncoderLayer both name them;
// what differs between the families' towers is data:
//   image tower: pixels -> Conv2d(3, E, P, stride P) -> [N, E] patches, [CLS] first where the
//       family has a class embedding (CLIP), + position_embedding (resized bicubically to another
//       grid, as interpolate_pos_encoding), a LayerNorm over them where the family has one
//       (CLIP's pre_layrnorm); the blocks; post_layernorm over every row.
//   text tower: token_embedding[ids] + position_embedding[0 .. T-1]; the blocks (causal for
//       CLIP, bidirectional for SigLIP); final_layer_norm. Text through the folder's
//       tokenizer (TowerTokenizer); without one, token ids only.
// The model on the towers (zero_shot_model.h) reads their outputs.

#include "core/models/hf/config_fields.h"
#include "core/models/hf/encoder.h"
#include "core/models/hf/image_processor.h"

#include <memory>
#include <string>

namespace headscope {

// The stack's sizes a family's tower config class defaults to.
struct TowerDefaults {
    Eigen::Index width = 768;
    Eigen::Index n_layers = 12;
    Eigen::Index n_heads = 12;
    Eigen::Index mlp_width = 3072;
    const char* hidden_act = "quick_gelu";
    float norm_eps = 1e-5f;
};

// A tower's stack from its part of config.json (`f`: "text_config." or "vision_config."),
// with `defaults` where a field is absent.
EncoderConfig read_tower_stack(const HfFields& f, const std::string& model_type, const TowerDefaults& defaults);

// A nested config (text_config / vision_config): absent or null reads as every default, as
// CLIPConfig and SiglipConfig do.
const nlohmann::json& read_sub_config(const HfFields& f, const std::string& name);

// What an image tower's embeddings hold, beyond the patches and their positions.
struct TowerImageLayout {
    std::string architecture;       // the tower's class, "CLIPVisionModel"
    bool class_embedding = false;   // CLIP: [CLS] (vision_model.embeddings.class_embedding) before the patches
    bool patch_bias = false;        // SigLIP: the patch convolution's bias
    std::string pre_norm;           // CLIP: a LayerNorm over the embeddings ("vision_model.pre_layrnorm"); "": none
};

// Reads vision_config's image_size, patch_size and num_channels (`defaults_*` where absent)
// and the folder's preprocessor_config.json; sets `c`'s longest input. `model_type` names the
// processor class a file without one is read as.
std::unique_ptr<EncoderEnds> read_tower_image_ends(const HfFields& f, const std::string& folder,
                                                   const std::string& model_type, TowerImageLayout layout,
                                                   int default_image_size, int default_patch_size, EncoderConfig& c);

// Which tokenizer files a text tower reads, as transformers' tokenizer class for it does.
enum class TowerTokenizer {
    tokenizer_json,   // CLIP: tokenizer.json (vocab.json + merges.txt would be read by GPT-2's rule)
    // SigLIP: spiece.model through SiglipTokenizer, which has no tokenizer.json form (a hub
    // folder's tokenizer.json is not what transformers reads); tokenizer.json without one.
    siglip_sentencepiece,
};

// What a text tower's embeddings are, and how it reads text.
struct TowerTextLayout {
    std::string architecture;   // the tower's class, "CLIPTextModel"
    TowerTokenizer tokenizer = TowerTokenizer::tokenizer_json;
    std::string tokenizer_name;   // for the refusal without its files: "CLIP's tokenizer"
    Eigen::Index vocab_size = 0;
    Eigen::Index max_positions = 0;   // text_config.max_position_embeddings
};

std::unique_ptr<EncoderEnds> make_tower_text_ends(TowerTextLayout layout);

// The towers' tensor names: CLIPEncoderLayer's under vision_model. / text_model., each with
// its final norm (post_layernorm, final_layer_norm).
const EncoderFamily& image_tower_family();
const EncoderFamily& text_tower_family();

}   // namespace headscope
