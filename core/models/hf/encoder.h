#pragma once
// One encoder model for every bidirectional family (BERT; ViT and DeiT), built from a family
// description, as the decoder (decoder.h) is for the causal ones. A family is data:
//   - `EncoderConfig`: what its config.json says of the stack, in one vocabulary (widths,
//     heads, layers, the activation, the LayerNorms and where they sit, biases, labels);
//   - `EncoderTensorNames`: where each layer's tensors live, written once; the one
//     bind_tensors (encoder.cpp) walks them for loading, export and the parameter count;
//   - `EncoderEnds`: what is the family's own at the two ends of the stack: its input (token
//     embeddings and a tokenizer, or patches and an image processor) and its heads, with
//     their tensors (named once, in two function templates, EncoderEndsOf);
//   - `EncoderFamily`: the names and the reader that makes the config and the ends: a
//     registry row.
//
//   x = ends.encode_*(input)                          [T, E]: what the first layer consumes
//   per layer: the block (core/nn/block.h), post-norm (BERT) or pre-norm (ViT), bidirectional
//   hidden = final_norm(x) where the family has one;  logits = ends.logits(hidden)
//
// The backbone's tensors are read with or without the task model's prefix, the model_type
// ("bert.", "vit.", "deit."), as transformers' task models store them.

#include "core/base/load_control.h"
#include "core/models/hf/checkpoint_load.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"
#include "core/models/model.h"
#include "core/nn/run_blocks.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace headscope {

struct EncoderConfig {
    std::string model_type;                        // "bert", "vit", "deit": also the prefix of the backbone's tensors
    std::string architecture;                      // architectures[0]; "" when absent (the stored head then names it)
    Eigen::Index width = 0;                        // E (hidden_size)
    Eigen::Index n_layers = 0;                     // L (num_hidden_layers)
    Eigen::Index n_heads = 0;                      // H (num_attention_heads); E % H == 0
    Eigen::Index mlp_width = 0;                    // I (intermediate_size)
    std::string mlp_field = "intermediate_size";   // what config.json calls I, in messages ("hidden_size x mlp_ratio")
    Eigen::Index max_tokens = 0;                   // the longest input at the config's sizes, for `info`
    Eigen::Index max_run_tokens = 0;               // the longest run_blocks takes; 0: any (ViT's own-resolution grids)
    std::string hidden_act = "gelu";               // as config.json names it, for `info`
    Activation activation = Activation::gelu;
    float norm_eps = 1e-12f;                             // every LayerNorm's (layer_norm_eps)
    NormPlacement norm_placement = NormPlacement::pre;   // post: BERT (the residual sum is normalised)
    bool qkv_bias = true;                                // biases on q, k and v
    bool causal = false;                                 // CLIP's text tower: each position sees those before it
    bool layer_scale = false;            // DINOv2: each sublayer's output times a learned [E] (LayerScale)
    bool gated_mlp = false;              // DINOv2's SwiGLU: silu(gate) * up from one packed [2I, E] tensor
    std::vector<std::string> id2label;   // [num_labels]; "LABEL_i" where the file names none
};

// Where each layer's tensors live, after `<layers><l>.`. Each norm is bound where the
// computation reads it: before its sublayer (pre-norm) or after it (post-norm).
struct EncoderTensorNames {
    std::string layers = "encoder.layer.";
    std::string attention_norm = {};   // pre: attention's input; post: the sum after attention
    std::string q = "attention.self.query";
    std::string k = "attention.self.key";
    std::string v = "attention.self.value";
    std::string out = "attention.output.dense";
    std::string mlp_norm = {};   // pre: the MLP's input; post: the sum after it
    std::string up = "intermediate.dense";
    std::string down = "output.dense";
    // EncoderConfig::gated_mlp: gate then up rows in one tensor [2I, E], and the down projection.
    std::string packed_gate_up = {};
    std::string gated_down = {};
    // EncoderConfig::layer_scale: each sublayer's factor [E].
    std::string attention_scale = {};
    std::string mlp_scale = {};
    std::string final_norm = {};   // after the last layer; empty: none (BERT)
    // Buffers and parameters transformers stores but this forward does not use: ignored.
    std::vector<std::string> ignorable = {};
};

// Which of the ends' tensors a bind call walks: the input's (before the layers) or the
// heads' (after them), so that every list keeps the checkpoint's order.
enum class EncoderPart { inputs, head };

// What a family puts at the two ends of the shared stack: the input and the heads, with
// their tensors and settings. Made by the family's reader (EncoderFamily::read_config);
// the model calls it in this order while loading: choose_head, bind (inputs, the layers,
// head), finish_weights, read_files; then describe.
class EncoderEnds {
public:
    virtual ~EncoderEnds() = default;

    // Which head the checkpoint carries: config.json's architectures when given (its
    // tensors must then be there), otherwise whatever head `table` holds.
    virtual void choose_head(const EncoderConfig& c, const HfTensorTable& table) = 0;
    // The family's tensors of `part` through each binder (core/models/tensor_binder.h);
    // EncoderEndsOf writes these from the family's one list.
    virtual void bind(EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why, HfTensorLoader& b) = 0;
    virtual void bind(EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why,
                      TensorExporter& b) const = 0;
    virtual void bind(EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why,
                      ParameterCounter& b) const = 0;
    // After binding, before unknown tensors are refused: tied copies and aliases (BERT's decoder).
    virtual void finish_weights(const EncoderConfig&, HfTensorTable&, const std::string& /*folder*/) {}
    // After the weights: what the input reads from the folder last (BERT's tokenizer).
    virtual void read_files(const std::string& /*folder*/) {}
    // architectures[0], or the class the head found makes.
    virtual std::string architecture(const EncoderConfig& c) const = 0;
    // The input's and head's part of `info` (takes_*, classifier, sizes, settings); returns
    // what the one-line description adds after the stack's sizes.
    virtual std::string describe(ModelInfo& info, const EncoderConfig& c) const = 0;

    // Called only for the inputs `describe` said it takes (the model refuses the others as
    // every Model does), after the mapped files are checked; `model` names it in messages.
    virtual ModelInput encode_text(std::string_view text, const std::string& model) const;
    virtual ModelInput encode_ids(std::span<const std::int64_t> ids, const std::string& model) const;
    virtual ModelInput encode_image(const RgbImage& image, const ImageOptions& options, const std::string& model) const;
    // Refuses an input the stack cannot take, before the run (ViT: patches after the prefix tokens).
    virtual void check_input(const ModelInput&, const ModelInfo&) const {}
    // How many of the last layer's first rows the head reads; -1: every row. The last MLP
    // runs for those rows alone.
    virtual Eigen::Index rows_read(Eigen::Index) const { return -1; }
    // The head's output for `hidden` (rows_read rows, after the final norm); empty: no head.
    virtual Matrix logits(const Matrix& hidden, const EncoderConfig& c) const = 0;
    // What logit column `index` means.
    virtual std::string output_label(Eigen::Index index) const { return std::to_string(index); }

protected:
    // id2label's name for a class, or the number.
    static std::string class_name(const std::vector<std::string>& id2label, Eigen::Index index);
};

// The three binders' calls of a family's ends, from its one list of tensors, written as
//     template <typename Self, typename Binder>
//     static void bind_inputs(Self& self, const EncoderConfig& c, const StackShapeReasons& why, Binder& b);
//     ... bind_head (same)
// in `Family` (Self: const when exporting or counting).
template <typename Family>
class EncoderEndsOf : public EncoderEnds {
public:
    void bind(EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why, HfTensorLoader& b) override {
        walk(static_cast<Family&>(*this), part, c, why, b);
    }
    void bind(EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why,
              TensorExporter& b) const override {
        walk(static_cast<const Family&>(*this), part, c, why, b);
    }
    void bind(EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why,
              ParameterCounter& b) const override {
        walk(static_cast<const Family&>(*this), part, c, why, b);
    }

private:
    template <typename Self, typename Binder>
    static void walk(Self& self, EncoderPart part, const EncoderConfig& c, const StackShapeReasons& why, Binder& b) {
        if (part == EncoderPart::inputs) {
            Family::bind_inputs(self, c, why, b);
        } else {
            Family::bind_head(self, c, why, b);
        }
    }
};

// One of a family's heads, for EncoderEnds::choose_head: the architectures[0] values that
// name it, and the tensors only it stores (any one shows it is there).
template <typename Head>
struct EncoderHeadChoice {
    Head head;
    std::vector<std::string> architectures;
    std::vector<std::string> tensors;
};

// The head config.json's architectures[0] names (its tensors must then be there), or,
// when it names none, the first in `heads` whose tensor `table` holds; `none` otherwise.
template <typename Head>
Head choose_encoder_head(const std::string& architecture, const HfTensorTable& table,
                         const std::vector<EncoderHeadChoice<Head>>& heads, Head none) {
    for (const EncoderHeadChoice<Head>& choice : heads) {
        for (const std::string& name : architecture.empty() ? choice.tensors : choice.architectures) {
            if (architecture.empty() ? table.has(name) : name == architecture) return choice.head;
        }
    }
    return none;
}

// Reads what every encoder's config.json names alike, with BertConfig's and ViTConfig's
// defaults (the base checkpoints' sizes): hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, hidden_act.
void read_encoder_basics(const HfFields& f, EncoderConfig& c);

// What a family's reader makes of a folder: the stack's settings and the family's ends.
struct EncoderSetup {
    EncoderConfig config;
    std::unique_ptr<EncoderEnds> ends;
};

struct EncoderFamily {
    EncoderTensorNames names;
    // Reads and validates config.json (`f`), refusing what changes the computation and is
    // not implemented, and what the family reads before the weights from `folder` (ViT's
    // preprocessor_config.json). nullptr for a tower, whose composite reads its config.
    EncoderSetup (*read_config)(const HfFields& f, const std::string& folder) = nullptr;
};

// The stack's weights; the ends hold the family's own.
struct EncoderWeights {
    Stack stack;                      // encoder.layer.{l}.*                [L]
    std::vector<Linear> packed_mlp;   // [L] gate and up [2I, E] where gated_mlp (the blocks' gate and up view it)
    Norm final_norm;                  // EncoderTensorNames::final_norm     [E], or empty
};

class HfEncoderModel final : public Model {
public:
    HfEncoderModel(const EncoderFamily& family, const std::string& folder, const LoadControl& control);
    // One tower of a checkpoint that holds two stacks (CLIP's image and text towers): `setup`
    // read by the composite's reader from its part of config.json, the tensors taken from
    // `checkpoint` under the full names `family.names` and the ends give; the composite
    // refuses the tensors nobody took once its towers and its own are bound.
    HfEncoderModel(const EncoderFamily& family, EncoderSetup setup, HfCheckpointWeights& checkpoint,
                   const std::string& folder);

    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override;
    using Model::encode_image;
    ModelInput encode_image(const RgbImage& image, const ImageOptions& options) const override;
    ModelInput encode_ids(std::span<const std::int64_t> ids) const override;
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override;
    Matrix head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const override {
        return stack_head_map(weights_.stack, trace, layer, head);
    }
    AttentionTrace layer_stages(const ModelTrace& trace, Eigen::Index layer, const HeadMask& disabled_heads,
                                Eigen::Index only_head) const override {
        return stack_layer_stages(weights_.stack, trace, layer, disabled_heads, only_head);
    }
    // Every weight as float, under transformers' names without the backbone's prefix.
    std::vector<OwnedTensor> export_weights() const override;
    std::string output_label(Eigen::Index index) const override;

    const EncoderConfig& config() const { return config_; }

private:
    // Lays the stack out from config_ and binds every tensor of it and its ends from `checkpoint`.
    void bind_from(HfCheckpointWeights& checkpoint, const std::string& folder);
    void describe(const std::string& folder, const HfTensorTable& table, const HfWeights& stored);

    const EncoderFamily& family_;
    EncoderConfig config_;
    std::unique_ptr<EncoderEnds> ends_;
    EncoderWeights weights_;
    HfMappedFiles mapped_;   // the files F32 weights are read from in place
    ModelInfo info_;
};

// Opens a checkpoint folder of `family`.
std::unique_ptr<Model> load_hf_encoder(const EncoderFamily& family, const std::string& folder,
                                       const LoadControl& control = {});

}   // namespace headscope
