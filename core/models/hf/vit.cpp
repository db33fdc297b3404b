#include "core/models/hf/vit.h"

#include "core/base/error.h"
#include "core/image/grid_resize.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

namespace headscope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string architecture_name(const HfVitConfig& c, HfVitHead head) {
    if (!c.architecture.empty()) return c.architecture;
    const std::string family = c.model_type == "deit" ? "DeiT" : "ViT";
    switch (head) {
    case HfVitHead::none: return family + "Model";
    case HfVitHead::classifier: return family + "ForImageClassification";
    case HfVitHead::classifier_with_teacher: return family + "ForImageClassificationWithTeacher";
    }
    return family + "Model";
}

// How many of the last layer's first rows a head reads: [CLS], and DeiT's teacher the
// distillation row too; without a head, every row is the output.
Eigen::Index rows_read_by(HfVitHead head, Eigen::Index T) {
    switch (head) {
    case HfVitHead::none: return T;
    case HfVitHead::classifier: return 1;
    case HfVitHead::classifier_with_teacher: return 2;
    }
    return T;
}

std::vector<std::string> supported_architectures(const std::string& model_type) {
    if (model_type == "deit")
        return {"DeiTModel", "DeiTForImageClassification", "DeiTForImageClassificationWithTeacher"};
    return {"ViTModel", "ViTForImageClassification"};
}

// Which head: config.json's architectures when given (the tensors must then be there),
// otherwise whatever classifier the file holds.
HfVitHead head_of(const HfVitConfig& c, const HfTensorTable& table) {
    if (c.architecture == "ViTForImageClassification" || c.architecture == "DeiTForImageClassification") {
        return HfVitHead::classifier;
    }
    if (c.architecture == "DeiTForImageClassificationWithTeacher") return HfVitHead::classifier_with_teacher;
    if (c.architecture.empty()) {
        if (c.model_type == "deit" && table.has("cls_classifier.weight")) return HfVitHead::classifier_with_teacher;
        if (table.has("classifier.weight")) return HfVitHead::classifier;
    }
    return HfVitHead::none;
}

// The processor must hand the model images of config.json's image_size.
void check_processor_output(const std::string& path, const HfImageProcessorConfig& p, int image_size) {
    if (!p.do_resize && !p.do_center_crop) return;
    const int out_w = p.do_center_crop ? p.crop_width : p.resize_width;
    const int out_h = p.do_center_crop ? p.crop_height : p.resize_height;
    if (out_w != image_size || out_h != image_size) {
        throw Error(path + ": images come out " + std::to_string(out_w) + "x" + std::to_string(out_h) + " px (" +
                    (p.do_center_crop ? "crop_size" : "size") + "), but config.json's image_size is " +
                    std::to_string(image_size));
    }
}

// Every tensor of a ViT / DeiT checkpoint, once: loading, export and the parameter count.
template <typename Weights, typename Binder>
void bind_tensors(Weights& w, const HfVitConfig& c, Binder& b) {
    const Eigen::Index E = c.hidden_size;
    const Eigen::Index I = c.intermediate_size;
    const Eigen::Index P = c.patch_size;
    const Eigen::Index T = c.n_prefix_tokens() + c.n_patches();
    const std::string e_why = "config.json: hidden_size = " + std::to_string(E);
    const std::string i_why = e_why + ", intermediate_size = " + std::to_string(I);
    b.vector("embeddings.cls_token", w.cls_token, E, e_why, {1, 1, E});
    if (c.model_type == "deit") b.vector("embeddings.distillation_token", w.distillation_token, E, e_why, {1, 1, E});
    b.matrix("embeddings.position_embeddings", w.position_embeddings, T, E,
             e_why + ", image_size / patch_size = " + std::to_string(c.grid_side()) + ": " +
                 std::to_string(c.n_patches()) + " patches + " + std::to_string(c.n_prefix_tokens()) +
                 (c.n_prefix_tokens() == 1 ? " [CLS]" : " [CLS], [DIST]"),
             {1, T, E});
    b.weight("embeddings.patch_embeddings.projection.weight", w.patch_weight, E, 3 * P * P,
             e_why + ", num_channels = 3, patch_size = " + std::to_string(P), {E, 3, P, P});
    b.vector("embeddings.patch_embeddings.projection.bias", w.patch_bias, E, e_why);
    for (std::size_t l = 0; l < w.stack.blocks.size(); ++l) {
        auto& block = w.stack.blocks[l];
        const std::string prefix = "encoder.layer." + std::to_string(l) + ".";
        bind_norm(b, prefix + "layernorm_before", block.attention_norm, E, e_why);
        bind_linear(b, prefix + "attention.attention.query", block.attention.q, E, E, e_why, c.qkv_bias);
        bind_linear(b, prefix + "attention.attention.key", block.attention.k, E, E, e_why, c.qkv_bias);
        bind_linear(b, prefix + "attention.attention.value", block.attention.v, E, E, e_why, c.qkv_bias);
        bind_linear(b, prefix + "attention.output.dense", block.attention.out, E, E, e_why);
        bind_norm(b, prefix + "layernorm_after", block.mlp_norm, E, e_why);
        bind_linear(b, prefix + "intermediate.dense", block.mlp.up, I, E, i_why);
        bind_linear(b, prefix + "output.dense", block.mlp.down, E, I, i_why);
    }
    bind_norm(b, "layernorm", w.layernorm, E, e_why);
    const bool pooler = w.pooler.weight.size() != 0;
    if (b.present("pooler.dense.weight", pooler) || b.present("pooler.dense.bias", pooler)) {
        const Eigen::Index pooled = c.pooler_output_size > 0 ? c.pooler_output_size : E;
        bind_linear(b, "pooler.dense", w.pooler, pooled, E, e_why + ", pooler_output_size = " + std::to_string(pooled));
    }
    const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
    const std::string label_why =
        e_why + ", " + std::to_string(n_labels) + (n_labels == 1 ? " label" : " labels") + " in id2label";
    if (w.head == HfVitHead::classifier) {
        bind_linear(b, "classifier", w.classifier, n_labels, E, label_why);
    } else if (w.head == HfVitHead::classifier_with_teacher) {
        bind_linear(b, "cls_classifier", w.classifier, n_labels, E, label_why);
        bind_linear(b, "distillation_classifier", w.distillation_classifier, n_labels, E, label_why);
    }
}

}   // namespace

HfVitConfig read_hf_vit_config(const std::string& config_path) {
    const json config = read_hf_json_file(config_path);
    const HfFields f(config, config_path);
    HfVitConfig c;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "vit" && c.model_type != "deit") {
        f.fail("model_type", "expected 'vit' or 'deit', got " + hf_quoted(c.model_type));
    }
    c.architecture = read_hf_architecture(f, c.model_type, supported_architectures(c.model_type));
    c.hidden_size = f.integer("hidden_size", c.hidden_size, 1, 65536);
    c.num_hidden_layers = f.integer("num_hidden_layers", c.num_hidden_layers, 1, 1024);
    c.num_attention_heads = f.integer("num_attention_heads", c.num_attention_heads, 1, 65536);
    c.intermediate_size = f.integer("intermediate_size", c.intermediate_size, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", c.hidden_act);
    c.activation = read_hf_activation(f, c.hidden_act);
    c.layer_norm_eps = read_hf_epsilon(f, "layer_norm_eps", c.layer_norm_eps);
    c.image_size = static_cast<int>(f.integer("image_size", c.image_size, 1, max_image_side));
    c.patch_size = static_cast<int>(f.integer("patch_size", c.patch_size, 1, max_image_side));
    c.num_channels = static_cast<int>(f.integer("num_channels", c.num_channels, 1, 4096));
    c.qkv_bias = f.boolean("qkv_bias", c.qkv_bias);
    c.pooler_output_size = f.integer("pooler_output_size", 0, 1, 1 << 20);
    c.id2label = read_hf_labels(f);

    check_hf_head_split(config_path, c.hidden_size, "hidden_size", c.num_attention_heads, "num_attention_heads");
    if (c.patch_size > c.image_size || c.image_size % c.patch_size != 0) {
        throw Error(config_path + ": image_size = " + std::to_string(c.image_size) +
                    " is not a multiple of patch_size = " + std::to_string(c.patch_size));
    }
    if (c.num_channels != 3) {
        f.fail("num_channels", "expected 3 (RGB images), got " + std::to_string(c.num_channels));
    }
    return c;
}

HfVitModel::HfVitModel(const std::string& folder, const LoadControl& control) {
    const fs::path dir(folder);
    config_ = read_hf_vit_config((dir / "config.json").string());
    const HfVitConfig& c = config_;
    const std::string processor_path = (dir / "preprocessor_config.json").string();
    preprocessing_ = read_hf_image_processor_config(processor_path, c.model_type);
    check_processor_output(processor_path, preprocessing_, c.image_size);

    const HfWeights stored = HfWeights::open(folder);
    mapped_ = HfMappedFiles(stored);
    HfTensorTable table(stored, c.model_type + ".", folder, control);
    HfVitWeights& w = weights_;
    w.head = head_of(c, table);

    // ViT's block: pre-LN, sequential; every norm the config's epsilon.
    w.stack = layer_norm_stack({}, c.num_hidden_layers, c.num_attention_heads, c.layer_norm_eps, c.activation);
    w.layernorm.eps = c.layer_norm_eps;
    HfTensorLoader loader(table);
    bind_tensors(w, c, loader);
    for (Block& block : w.stack.blocks) block.attention.validate();
    if (w.head != HfVitHead::none) id2label_ = c.id2label;

    // Buffers and parameters transformers keeps but a forward pass here does not use:
    // the masked-image-modelling token, and position ids some converters store.
    const std::string architecture = architecture_name(c, w.head);
    table.check_all_taken({"embeddings.mask_token", "embeddings.position_ids"}, architecture);
    describe(folder, architecture, table, stored);
}

void HfVitModel::describe(const std::string& folder, const std::string& architecture, const HfTensorTable& table,
                          const HfWeights& stored) {
    const HfVitConfig& c = config_;
    const HfImageProcessorConfig& p = preprocessing_;
    const HfVitWeights& w = weights_;
    const Eigen::Index E = c.hidden_size;
    const auto n_labels = static_cast<Eigen::Index>(c.id2label.size());
    info_.name = folder;
    info_.description = "Hugging Face " + architecture + " (" + c.model_type + ": E=" + std::to_string(E) +
                        " H=" + std::to_string(c.num_attention_heads) + " L=" + std::to_string(c.num_hidden_layers) +
                        ", " + std::to_string(c.image_size) + " px, P=" + std::to_string(c.patch_size) +
                        (w.head == HfVitHead::none ? "" : ", " + std::to_string(n_labels) + " labels") + ")";
    info_.n_layers = c.num_hidden_layers;
    info_.n_heads = c.num_attention_heads;
    info_.width = E;
    info_.head_width = E / c.num_attention_heads;
    info_.mlp_width = c.intermediate_size;
    info_.max_tokens = c.n_prefix_tokens() + c.n_patches();
    info_.takes_image = true;
    info_.classifier = w.head != HfVitHead::none;
    info_.image_size = c.image_size;
    info_.patch_size = c.patch_size;
    ParameterCounter counter;
    bind_tensors(weights_, c, counter);
    info_.n_parameters = counter.count();
    info_.warnings = table.warnings();
    const auto size_text = [](int width, int height) { return std::to_string(width) + "x" + std::to_string(height); };
    const auto channels_text = [](const float(&v)[3]) {
        std::string text = "[";   // built in steps: GCC 12 mis-warns (-Wrestrict) on "[" + std::string
        text += hf_number_text(v[0]) + ", " + hf_number_text(v[1]) + ", " + hf_number_text(v[2]) + "]";
        return text;
    };
    info_.settings = {
        {"model_type", c.model_type},
        {"architecture", architecture},
        {"hidden_act", c.hidden_act},
        {"layer_norm_eps", hf_number_text(c.layer_norm_eps)},
        {"qkv_bias", c.qkv_bias ? "true" : "false"},
        {"labels", std::to_string(w.head == HfVitHead::none ? 0 : n_labels)},
        {"weights", stored.description()},
        {"processor", p.processor},
        {"resize", p.do_resize
                       ? size_text(p.resize_width, p.resize_height) + " " + std::string(resample_name(p.resample))
                       : "off"},
        {"center_crop", p.do_center_crop ? size_text(p.crop_width, p.crop_height) : "off"},
        {"rescale", p.do_rescale ? hf_number_text(p.rescale_factor) : "off"},
        {"normalize",
         p.do_normalize ? "mean " + channels_text(p.image_mean) + " std " + channels_text(p.image_std) : "off"},
    };
}

RgbImage HfVitModel::own_resolution_pixels(const RgbImage& image, int max_patches) const {
    const int P = config_.patch_size;
    if (max_patches < 1) throw Error("image: max_patches must be at least 1, got " + std::to_string(max_patches));
    if (image.width < P || image.height < P) {
        throw Error("image: " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                    " px is smaller than one " + std::to_string(P) + " px patch, so it has no own-resolution grid");
    }
    RgbImage pixels = image;
    const double patches =
        std::floor(image.width / static_cast<double>(P)) * std::floor(image.height / static_cast<double>(P));
    if (patches > max_patches) {
        // Shrink, keeping the aspect, until whole patches number at most max_patches.
        double scale = std::sqrt(max_patches / patches);
        int w = 0;
        int h = 0;
        for (;; scale *= 0.995) {
            w = std::max(P, static_cast<int>(std::floor(image.width * scale)));
            h = std::max(P, static_cast<int>(std::floor(image.height * scale)));
            if (static_cast<long long>(w / P) * (h / P) <= max_patches) break;
        }
        pixels = resize_image(image, w, h, preprocessing_.resample);
    }
    // Whole patches only: cut the right and bottom remainders, as DINO's script does.
    const int w = pixels.width - pixels.width % P;
    const int h = pixels.height - pixels.height % P;
    if (w == pixels.width && h == pixels.height) return pixels;
    RgbImage cut{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * 3)};
    for (int y = 0; y < h; ++y) {
        const auto from = pixels.pixels.begin() + static_cast<std::ptrdiff_t>(y) * pixels.width * 3;
        std::copy(from, from + w * 3, cut.pixels.begin() + static_cast<std::ptrdiff_t>(y) * w * 3);
    }
    return cut;
}

ModelInput HfVitModel::encode_image(const RgbImage& image, const ImageOptions& options) const {
    const HfImageProcessorConfig& p = preprocessing_;
    const RgbImage pixels =
        options.own_resolution ? own_resolution_pixels(image, options.max_patches) : hf_preprocess_pixels(image, p);
    const int S = config_.image_size;
    if (!options.own_resolution && (pixels.width != S || pixels.height != S)) {
        throw Error("image: " + std::to_string(pixels.width) + "x" + std::to_string(pixels.height) +
                    " px after preprocessing, but " + info_.name + " takes " + std::to_string(S) + "x" +
                    std::to_string(S) + " (preprocessor_config.json resizes nothing: do_resize is false)");
    }
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    const float one[3] = {1.0f, 1.0f, 1.0f};
    const ImageTensor values =
        normalize_image(pixels, p.do_rescale ? p.rescale_factor : 1.0f, p.do_normalize ? p.image_mean : zero,
                        p.do_normalize ? p.image_std : one);
    const Matrix patches =
        patch_embed(values, config_.patch_size, weights_.patch_weight, weights_.patch_bias);   // [N, E]

    const int prefix = config_.n_prefix_tokens();
    ModelInput input;
    input.embeddings.resize(prefix + patches.rows(), config_.hidden_size);   // [T, E]
    input.embeddings.row(0) = weights_.cls_token.transpose();
    input.labels.push_back("[CLS]");
    if (prefix == 2) {
        input.embeddings.row(1) = weights_.distillation_token.transpose();
        input.labels.push_back("[DIST]");
    }
    input.embeddings.bottomRows(patches.rows()) = patches;
    const int grid_w = pixels.width / config_.patch_size;
    const int grid_h = pixels.height / config_.patch_size;
    const int side = config_.grid_side();
    input.embeddings.topRows(prefix) += weights_.position_embeddings.topRows(prefix);
    if (grid_w == side && grid_h == side) {
        input.embeddings.bottomRows(patches.rows()) += weights_.position_embeddings.bottomRows(patches.rows());
    } else {
        input.embeddings.bottomRows(patches.rows()) += resize_grid_bicubic(
            weights_.position_embeddings.bottomRows(config_.n_patches()), side, side, grid_h, grid_w);
    }
    for (Eigen::Index n = 0; n < patches.rows(); ++n) {
        std::string label = "p";
        label += std::to_string(n);
        input.labels.push_back(std::move(label));
    }
    input.grid_width = grid_w;
    input.grid_height = grid_h;
    input.n_prefix_tokens = prefix;
    input.pixels = pixels;
    return input;
}

ModelTrace HfVitModel::forward(const ModelInput& input, const RunOptions& options) const {
    mapped_.check();
    check_disabled_heads(info_.n_layers, info_.n_heads, options.disabled_heads);
    const Eigen::Index T = input.embeddings.rows();
    // Any patch grid (own resolution) after the prefix tokens.
    if (T <= config_.n_prefix_tokens() || input.embeddings.cols() != info_.width) {
        throw Error(info_.name + ": input embeddings are [" + std::to_string(T) + ", " +
                    std::to_string(input.embeddings.cols()) + "], expected [" +
                    std::to_string(config_.n_prefix_tokens()) + " + patches, " + std::to_string(info_.width) + "]");
    }
    // The last layer's MLP runs for the rows the head reads alone: the others feed no map
    // and no logit (5% of ViT-B/16's products).
    const Eigen::Index read_rows = rows_read_by(weights_.head, T);
    StackRun run = run_blocks(info_.name, weights_.stack, input.embeddings, options, read_rows);
    ModelTrace trace = std::move(run.trace);
    trace.hidden = norm_forward(weights_.layernorm, run.x.topRows(read_rows));
    switch (weights_.head) {
    case HfVitHead::none: break;
    case HfVitHead::classifier: trace.logits = linear_forward(weights_.classifier, trace.hidden.topRows(1)); break;
    case HfVitHead::classifier_with_teacher:
        // As transformers at inference: the mean of the [CLS] and distillation heads.
        trace.logits = 0.5f * (linear_forward(weights_.classifier, trace.hidden.topRows(1)) +
                               linear_forward(weights_.distillation_classifier, trace.hidden.middleRows(1, 1)));
        break;
    }
    return trace;
}

std::string HfVitModel::output_label(Eigen::Index index) const {
    const auto i = static_cast<std::size_t>(index);
    return index >= 0 && i < id2label_.size() ? id2label_[i] : std::to_string(index);
}

std::vector<OwnedTensor> HfVitModel::export_weights() const {
    TensorExporter exporter;
    bind_tensors(weights_, config_, exporter);
    return exporter.take();
}

std::unique_ptr<Model> load_hf_vit(const std::string& folder, const LoadControl& control) {
    return std::make_unique<HfVitModel>(folder, control);
}

}   // namespace headscope
