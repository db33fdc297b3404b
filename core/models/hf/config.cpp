#include "core/models/hf/config.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

namespace headscope {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Real config files are a few kilobytes (an ImageNet-21k id2label about 1 MB).
constexpr std::uintmax_t max_json_bytes = 64u << 20;
// config.json nests sub-configs a few levels deep; much deeper is hostile, and deep
// values would make recursive code (printing them) overflow the stack.
constexpr int max_json_depth = 16;

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

std::string join(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text.append(text.empty() ? "" : ", ").append(item);
    return text;
}

// A short, non-recursive rendering of a JSON value for messages.
std::string brief(const json& value) {
    if (value.is_primitive()) {
        std::string text = value.dump();
        return text.size() > 40 ? text.substr(0, 40) + "..." : text;
    }
    return std::string("a JSON ") + value.type_name();
}

json read_json_file(const std::string& path) {
    const std::string text = read_file_bytes(path, max_json_bytes, "a config file");
    const auto guard = [&](int depth, json::parse_event_t, json&) {
        if (depth > max_json_depth) {
            throw Error(path + ": JSON nests deeper than " + std::to_string(max_json_depth) + " levels");
        }
        return true;
    };
    json value;
    try {
        value = json::parse(text, guard);
    } catch (const json::exception& e) {
        throw Error(path + ": not valid JSON (" + e.what() + ")");
    }
    if (!value.is_object()) throw Error(path + ": expected a JSON object, got " + brief(value));
    return value;
}

// Typed, range-checked reads of one object's fields; every error names the file and
// the field, what was expected and what was there.
class Fields {
public:
    Fields(const json& object, std::string file) : object_(object), file_(std::move(file)) {}

    const json* find(const std::string& name) const {
        const auto it = object_.find(name);
        return (it == object_.end() || it->is_null()) ? nullptr : &*it;
    }

    [[noreturn]] void fail(const std::string& name, const std::string& expected, const json& got) const {
        throw Error(file_ + ": field " + in_quotes(name) + ": expected " + expected + ", got " + brief(got));
    }
    [[noreturn]] void fail(const std::string& name, const std::string& message) const {
        throw Error(file_ + ": field " + in_quotes(name) + ": " + message);
    }

    std::int64_t integer(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
        const json* v = find(name);
        if (v == nullptr) return fallback;
        return integer_value(name, *v, lo, hi);
    }

    std::int64_t integer_value(const std::string& name, const json& v, std::int64_t lo, std::int64_t hi) const {
        const std::string expected = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
        if (!v.is_number_integer()) fail(name, expected, v);
        if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
                                   : v.get<std::int64_t>() > hi) {
            fail(name, expected, v);
        }
        const auto value = v.get<std::int64_t>();
        if (value < lo) fail(name, expected, v);
        return value;
    }

    double number(const std::string& name, double fallback) const {
        const json* v = find(name);
        if (v == nullptr) return fallback;
        return number_value(name, *v);
    }

    double number_value(const std::string& name, const json& v) const {
        if (!v.is_number()) fail(name, "a number", v);
        const double value = v.get<double>();
        if (!std::isfinite(value) || std::abs(value) > 3.0e38) fail(name, "a finite number", v);
        return value;
    }

    bool boolean(const std::string& name, bool fallback) const {
        const json* v = find(name);
        if (v == nullptr) return fallback;
        if (!v->is_boolean()) fail(name, "true or false", *v);
        return v->get<bool>();
    }

    std::string string(const std::string& name, const std::string& fallback) const {
        const json* v = find(name);
        if (v == nullptr) return fallback;
        if (!v->is_string()) fail(name, "a string", *v);
        return v->get<std::string>();
    }

    const std::string& file() const { return file_; }

private:
    const json& object_;
    std::string file_;
};

HfActivation activation_from_name(const Fields& f, const std::string& name, const std::string& field = "hidden_act") {
    if (name == "gelu" || name == "gelu_python") return HfActivation::gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return HfActivation::gelu_tanh;
    if (name == "quick_gelu") return HfActivation::quick_gelu;
    if (name == "relu") return HfActivation::relu;
    if (name == "silu" || name == "swish") return HfActivation::silu;
    f.fail(field, in_quotes(name) + " is not supported (supported: gelu, gelu_python, gelu_new, "
                                    "gelu_pytorch_tanh, gelu_fast, quick_gelu, relu, silu, swish)");
}

// architectures[0] ("" when absent), which must be one of `known`.
std::string read_architecture(const Fields& f, const std::string& model_type, const std::vector<std::string>& known) {
    const json* archs = f.find("architectures");
    if (archs == nullptr) return "";
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
        f.fail("architectures", "an array of class names", *archs);
    }
    const std::string architecture = (*archs)[0].get<std::string>();
    for (const std::string& k : known) {
        if (k == architecture) return architecture;
    }
    f.fail("architectures", in_quotes(architecture) + " is not supported for model_type " + model_type +
                                " (supported: " + join(known) + ")");
}

// A Norm epsilon: positive, and still positive as a float.
float read_epsilon(const Fields& f, const std::string& name, float fallback) {
    const double eps = f.number(name, fallback);
    if (!(eps > 0.0) || static_cast<float>(eps) <= 0.0f) f.fail(name, "a positive number", eps);
    return static_cast<float>(eps);
}

std::vector<std::string> supported_architectures(const std::string& model_type) {
    if (model_type == "deit")
        return {"DeiTModel", "DeiTForImageClassification", "DeiTForImageClassificationWithTeacher"};
    return {"ViTModel", "ViTForImageClassification"};
}

// id2label {"0": "cat", ...}, or num_labels (transformers' default 2) named LABEL_i.
std::vector<std::string> read_labels(const Fields& f) {
    constexpr std::int64_t max_labels = 1 << 20;
    const std::int64_t num_labels = f.integer("num_labels", -1, 0, max_labels);
    const json* id2label = f.find("id2label");
    if (id2label == nullptr) {
        const std::int64_t n = num_labels < 0 ? 2 : num_labels;
        std::vector<std::string> labels;
        for (std::int64_t i = 0; i < n; ++i) labels.push_back("LABEL_" + std::to_string(i));
        return labels;
    }
    if (!id2label->is_object()) f.fail("id2label", "an object {\"0\": \"name\", ...}", *id2label);
    if (id2label->size() > static_cast<std::size_t>(max_labels)) {
        f.fail("id2label",
               "has " + std::to_string(id2label->size()) + " entries, more than " + std::to_string(max_labels));
    }
    const std::size_t n = id2label->size();
    std::vector<std::string> labels(n);
    std::vector<bool> seen(n, false);
    for (const auto& [key, value] : id2label->items()) {
        std::size_t id = 0;
        bool digits = !key.empty() && key.size() <= 8 && (key == "0" || key[0] != '0');
        for (char c : key) {
            digits = digits && c >= '0' && c <= '9';
            if (digits) id = id * 10 + static_cast<std::size_t>(c - '0');
        }
        if (!digits || id >= n) {
            f.fail("id2label", "key " + in_quotes(key) + " is not a label id in 0.." + std::to_string(n - 1));
        }
        if (!value.is_string()) f.fail("id2label", "label " + key + ": expected a string, got " + brief(value));
        seen[id] = true;
        labels[id] = value.get<std::string>();
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!seen[i]) f.fail("id2label", "label id " + std::to_string(i) + " is missing");
    }
    if (num_labels >= 0 && static_cast<std::size_t>(num_labels) != n) {
        f.fail("num_labels", "is " + std::to_string(num_labels) + " but id2label has " + std::to_string(n) + " labels");
    }
    return labels;
}

// A processor size: an integer (square), {"height": h, "width": w}, or [h, w]
// (transformers' get_size_dict). Returns {width, height}.
std::pair<int, int> read_size(const Fields& f, const std::string& name, std::pair<int, int> fallback) {
    const json* v = f.find(name);
    if (v == nullptr) return fallback;
    const std::int64_t hi = max_image_side;
    if (v->is_number_integer()) {
        const auto side = static_cast<int>(f.integer_value(name, *v, 1, hi));
        return {side, side};
    }
    if (v->is_array() && v->size() == 2) {
        const auto h = static_cast<int>(f.integer_value(name + "[0]", (*v)[0], 1, hi));
        const auto w = static_cast<int>(f.integer_value(name + "[1]", (*v)[1], 1, hi));
        return {w, h};
    }
    if (v->is_object()) {
        if (v->contains("height") && v->contains("width")) {
            const auto h = static_cast<int>(f.integer_value(name + ".height", v->at("height"), 1, hi));
            const auto w = static_cast<int>(f.integer_value(name + ".width", v->at("width"), 1, hi));
            return {w, h};
        }
        std::vector<std::string> keys;
        for (const auto& item : v->items()) keys.push_back(item.key());
        f.fail(name, "needs height and width (as ViT's and DeiT's image processors do), got keys {" + join(keys) + "}");
    }
    f.fail(name, "an integer, {\"height\": h, \"width\": w} or [h, w]", *v);
}

// image_mean / image_std: one number for every channel, or three.
void read_channels(const Fields& f, const std::string& name, float (&out)[3]) {
    const json* v = f.find(name);
    if (v == nullptr) return;
    if (v->is_number()) {
        const auto value = static_cast<float>(f.number_value(name, *v));
        out[0] = out[1] = out[2] = value;
        return;
    }
    if (!v->is_array() || v->size() != 3) f.fail(name, "a number or an array of 3 numbers", *v);
    for (std::size_t c = 0; c < 3; ++c) {
        out[c] = static_cast<float>(f.number_value(name + "[" + std::to_string(c) + "]", (*v)[c]));
    }
}

}   // namespace

std::vector<std::string> hf_supported_model_types() { return {"vit", "deit", "gpt2", "bert"}; }

std::string read_hf_model_type(const std::string& folder) {
    const std::string path = (fs::path(folder) / "config.json").string();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        throw Error(folder + ": no config.json, so not a Hugging Face checkpoint folder (expected config.json and "
                             "model.safetensors)");
    }
    const json config = read_json_file(path);
    const Fields f(config, path);
    const std::vector<std::string> supported = hf_supported_model_types();
    const json* type = f.find("model_type");
    if (type == nullptr) f.fail("model_type", "is missing (supported: " + join(supported) + ")");
    if (!type->is_string()) f.fail("model_type", "a string", *type);
    const std::string name = type->get<std::string>();
    for (const std::string& s : supported) {
        if (s == name) return name;
    }
    throw Error(path + ": model_type " + in_quotes(name) + " is not supported (supported: " + join(supported) + ")");
}

HfVitConfig read_hf_vit_config(const std::string& config_path) {
    const json config = read_json_file(config_path);
    const Fields f(config, config_path);
    HfVitConfig c;
    c.model_type = f.string("model_type", "");
    if (c.model_type != "vit" && c.model_type != "deit") {
        f.fail("model_type", "expected 'vit' or 'deit', got " + in_quotes(c.model_type));
    }
    c.architecture = read_architecture(f, c.model_type, supported_architectures(c.model_type));
    c.hidden_size = f.integer("hidden_size", c.hidden_size, 1, 65536);
    c.num_hidden_layers = f.integer("num_hidden_layers", c.num_hidden_layers, 1, 1024);
    c.num_attention_heads = f.integer("num_attention_heads", c.num_attention_heads, 1, 65536);
    c.intermediate_size = f.integer("intermediate_size", c.intermediate_size, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", c.hidden_act);
    c.activation = activation_from_name(f, c.hidden_act);
    c.layer_norm_eps = read_epsilon(f, "layer_norm_eps", c.layer_norm_eps);
    c.image_size = static_cast<int>(f.integer("image_size", c.image_size, 1, max_image_side));
    c.patch_size = static_cast<int>(f.integer("patch_size", c.patch_size, 1, max_image_side));
    c.num_channels = static_cast<int>(f.integer("num_channels", c.num_channels, 1, 4096));
    c.qkv_bias = f.boolean("qkv_bias", c.qkv_bias);
    c.pooler_output_size = f.integer("pooler_output_size", 0, 1, 1 << 20);
    c.id2label = read_labels(f);

    if (c.hidden_size % c.num_attention_heads != 0) {
        throw Error(config_path + ": hidden_size = " + std::to_string(c.hidden_size) +
                    " is not divisible by num_attention_heads = " + std::to_string(c.num_attention_heads));
    }
    if (c.patch_size > c.image_size || c.image_size % c.patch_size != 0) {
        throw Error(config_path + ": image_size = " + std::to_string(c.image_size) +
                    " is not a multiple of patch_size = " + std::to_string(c.patch_size));
    }
    if (c.num_channels != 3) {
        f.fail("num_channels", "expected 3 (RGB images), got " + std::to_string(c.num_channels));
    }
    return c;
}

HfGpt2Config read_hf_gpt2_config(const std::string& config_path) {
    const json config = read_json_file(config_path);
    const Fields f(config, config_path);
    HfGpt2Config c;
    const std::string model_type = f.string("model_type", "");
    if (model_type != "gpt2") f.fail("model_type", "expected 'gpt2', got " + in_quotes(model_type));
    c.architecture = read_architecture(f, "gpt2", {"GPT2Model", "GPT2LMHeadModel"});
    c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, 1 << 24);
    c.n_positions = f.integer("n_positions", c.n_positions, 1, 1 << 20);
    c.n_embd = f.integer("n_embd", c.n_embd, 1, 65536);
    c.n_layer = f.integer("n_layer", c.n_layer, 1, 1024);
    c.n_head = f.integer("n_head", c.n_head, 1, 65536);
    c.n_inner = f.integer("n_inner", 0, 1, 1 << 20);
    c.activation_function = f.string("activation_function", c.activation_function);
    c.activation = activation_from_name(f, c.activation_function, "activation_function");
    c.layer_norm_epsilon = read_epsilon(f, "layer_norm_epsilon", c.layer_norm_epsilon);
    if (!f.boolean("scale_attn_weights", true)) {
        f.fail("scale_attn_weights", "false is not supported (scores are always divided by sqrt(head width))");
    }
    if (f.boolean("scale_attn_by_inverse_layer_idx", false)) {
        f.fail("scale_attn_by_inverse_layer_idx", "true is not supported");
    }
    if (c.n_embd % c.n_head != 0) {
        throw Error(config_path + ": n_embd = " + std::to_string(c.n_embd) +
                    " is not divisible by n_head = " + std::to_string(c.n_head));
    }
    return c;
}

HfBertConfig read_hf_bert_config(const std::string& config_path) {
    const json config = read_json_file(config_path);
    const Fields f(config, config_path);
    HfBertConfig c;
    const std::string model_type = f.string("model_type", "");
    if (model_type != "bert") f.fail("model_type", "expected 'bert', got " + in_quotes(model_type));
    c.architecture = read_architecture(
        f, "bert", {"BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForSequenceClassification"});
    c.vocab_size = f.integer("vocab_size", c.vocab_size, 1, 1 << 24);
    c.hidden_size = f.integer("hidden_size", c.hidden_size, 1, 65536);
    c.num_hidden_layers = f.integer("num_hidden_layers", c.num_hidden_layers, 1, 1024);
    c.num_attention_heads = f.integer("num_attention_heads", c.num_attention_heads, 1, 65536);
    c.intermediate_size = f.integer("intermediate_size", c.intermediate_size, 1, 1 << 20);
    c.hidden_act = f.string("hidden_act", c.hidden_act);
    c.activation = activation_from_name(f, c.hidden_act);
    c.max_position_embeddings = f.integer("max_position_embeddings", c.max_position_embeddings, 1, 1 << 20);
    c.type_vocab_size = f.integer("type_vocab_size", c.type_vocab_size, 1, 1 << 20);
    c.layer_norm_eps = read_epsilon(f, "layer_norm_eps", c.layer_norm_eps);
    const std::string positions = f.string("position_embedding_type", "absolute");
    if (positions != "absolute") {
        f.fail("position_embedding_type", in_quotes(positions) + " is not supported (only 'absolute': learned "
                                                                 "position embeddings added to the input)");
    }
    if (f.boolean("is_decoder", false)) {
        f.fail("is_decoder", "true is not supported (BERT is read as an encoder: no causal decoder, no cache)");
    }
    if (f.boolean("add_cross_attention", false)) {
        f.fail("add_cross_attention", "true is not supported (no encoder-decoder cross-attention)");
    }
    c.id2label = read_labels(f);
    if (c.hidden_size % c.num_attention_heads != 0) {
        throw Error(config_path + ": hidden_size = " + std::to_string(c.hidden_size) +
                    " is not divisible by num_attention_heads = " + std::to_string(c.num_attention_heads));
    }
    return c;
}

WordPieceOptions read_hf_bert_tokenizer_config(const std::string& path) {
    WordPieceOptions options;
    std::error_code ec;
    if (!fs::exists(path, ec)) return options;
    const json config = read_json_file(path);
    const Fields f(config, path);
    const std::string tokenizer_class = f.string("tokenizer_class", "BertTokenizer");
    if (tokenizer_class != "BertTokenizer" && tokenizer_class != "BertTokenizerFast") {
        f.fail("tokenizer_class", in_quotes(tokenizer_class) + " is not supported (supported: BertTokenizer, "
                                                               "BertTokenizerFast)");
    }
    if (!f.boolean("do_basic_tokenize", true)) {
        f.fail("do_basic_tokenize", "false is not supported (text is always split on spaces and punctuation first)");
    }
    options.do_lower_case = f.boolean("do_lower_case", options.do_lower_case);
    if (const json* strip = f.find("strip_accents")) {
        if (!strip->is_boolean()) f.fail("strip_accents", "true, false or null", *strip);
        options.strip_accents = strip->get<bool>();
    }
    options.tokenize_chinese_chars = f.boolean("tokenize_chinese_chars", options.tokenize_chinese_chars);
    return options;
}

HfImageProcessorConfig read_hf_image_processor_config(const std::string& path, const std::string& model_type) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        throw Error(path + ": missing; it says how images are resized and normalised (copy it from the model's "
                           "Hugging Face repository)");
    }
    const json config = read_json_file(path);
    const Fields f(config, path);
    HfImageProcessorConfig p;
    const std::string fallback = model_type == "deit" ? "DeiTImageProcessor" : "ViTImageProcessor";
    p.processor = f.string("image_processor_type", f.string("feature_extractor_type", fallback));
    bool deit = false;
    if (p.processor == "DeiTImageProcessor" || p.processor == "DeiTImageProcessorFast" ||
        p.processor == "DeiTFeatureExtractor") {
        deit = true;
    } else if (p.processor != "ViTImageProcessor" && p.processor != "ViTImageProcessorFast" &&
               p.processor != "ViTFeatureExtractor") {
        throw Error(path + ": image processor " + in_quotes(p.processor) +
                    " is not supported (supported: ViTImageProcessor, DeiTImageProcessor and their FeatureExtractor "
                    "and Fast names)");
    }
    if (deit) {
        // DeiTImageProcessor's defaults: 256 px bicubic, centre crop to 224.
        p.resize_width = p.resize_height = 256;
        p.resample = Resample::bicubic;
        p.do_center_crop = true;
    }
    p.do_resize = f.boolean("do_resize", p.do_resize);
    std::tie(p.resize_width, p.resize_height) = read_size(f, "size", {p.resize_width, p.resize_height});
    if (const json* code = f.find("resample")) {
        const auto value = static_cast<int>(f.integer_value("resample", *code, 0, 5));
        const std::optional<Resample> r = resample_from_pil_code(value);
        if (!r) {
            f.fail("resample", "PIL filter " + std::to_string(value) + (value == 4 ? " (box)" : " (hamming)") +
                                   " is not supported (supported: 0 nearest, 1 lanczos, 2 bilinear, 3 bicubic)");
        }
        p.resample = *r;
    }
    if (deit) {
        // ViTImageProcessor has no crop: it ignores these fields, as transformers does.
        p.do_center_crop = f.boolean("do_center_crop", p.do_center_crop);
        std::tie(p.crop_width, p.crop_height) = read_size(f, "crop_size", {p.crop_width, p.crop_height});
    }
    p.do_rescale = f.boolean("do_rescale", p.do_rescale);
    p.rescale_factor = static_cast<float>(f.number("rescale_factor", p.rescale_factor));
    p.do_normalize = f.boolean("do_normalize", p.do_normalize);
    read_channels(f, "image_mean", p.image_mean);
    read_channels(f, "image_std", p.image_std);
    if (p.do_normalize) {
        for (int c = 0; c < 3; ++c) {
            if (p.image_std[c] == 0.0f) f.fail("image_std", "channel " + std::to_string(c) + " is 0");
        }
    }
    // Pixels 0 and 255 (the extremes) must stay finite once rescaled and normalised as
    // normalize_image computes them: a huge rescale_factor or a tiny image_std would make
    // every pixel Inf and every attention map NaN.
    const float rescale = p.do_rescale ? p.rescale_factor : 1.0f;
    for (int c = 0; c < 3; ++c) {
        const float mean = p.do_normalize ? p.image_mean[c] : 0.0f;
        const float std = p.do_normalize ? p.image_std[c] : 1.0f;
        for (const float pixel : {0.0f, 255.0f}) {
            if (!std::isfinite((pixel * rescale - mean) / std)) {
                char formula[160];
                std::snprintf(formula, sizeof formula, "(%g * %g - %g) / %g", pixel, rescale, mean, std);
                throw Error(path +
                            ": rescale_factor, image_mean and image_std take pixel values past float's range "
                            "(channel " +
                            std::to_string(c) + ": " + formula +
                            " is not finite); expected values that keep them finite");
            }
        }
    }
    return p;
}

RgbImage center_crop_image(const RgbImage& image, int width, int height) {
    if (width < 1 || height < 1 || width > max_image_side || height > max_image_side) {
        throw Error("centre crop: size " + std::to_string(width) + "x" + std::to_string(height) + " is out of range");
    }
    // Python's floor division, also for negative differences (then the image is padded).
    const auto floor_half = [](int d) { return d >= 0 ? d / 2 : -((-d + 1) / 2); };
    const int left = floor_half(image.width - width);
    const int top = floor_half(image.height - height);
    RgbImage out;
    out.width = width;
    out.height = height;
    out.pixels.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3, 0);
    for (int y = 0; y < height; ++y) {
        const int sy = y + top;
        if (sy < 0 || sy >= image.height) continue;
        for (int x = 0; x < width; ++x) {
            const int sx = x + left;
            if (sx < 0 || sx >= image.width) continue;
            const std::size_t from =
                (static_cast<std::size_t>(sy) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(sx)) *
                3;
            const std::size_t to =
                (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
            for (int c = 0; c < 3; ++c)
                out.pixels[to + static_cast<std::size_t>(c)] = image.pixels[from + static_cast<std::size_t>(c)];
        }
    }
    return out;
}

HfWeights HfWeights::open(const std::string& folder) {
    HfWeights w;
    const fs::path dir(folder);
    const std::string single = (dir / "model.safetensors").string();
    const std::string index = (dir / "model.safetensors.index.json").string();
    std::error_code ec;
    // Which shard the index says holds each tensor (empty for a single file).
    std::map<std::string, std::string> weight_map;
    if (fs::exists(single, ec)) {
        w.files_.push_back(std::make_shared<const SafetensorsFile>(SafetensorsFile::open(single)));
        w.description_ = "model.safetensors";
    } else if (fs::exists(index, ec)) {
        const json index_json = read_json_file(index);
        const Fields f(index_json, index);
        const json* map = f.find("weight_map");
        if (map == nullptr || !map->is_object() || map->empty()) {
            f.fail("weight_map", "an object {tensor name: shard file name}", map == nullptr ? json() : *map);
        }
        std::set<std::string> shards;
        for (const auto& [name, file] : map->items()) {
            if (!file.is_string())
                f.fail("weight_map", "tensor " + in_quotes(name) + ": expected a file name, got " + brief(file));
            const std::string shard = file.get<std::string>();
            if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos ||
                shard.find('\\') != std::string::npos) {
                f.fail("weight_map",
                       "tensor " + in_quotes(name) + ": " + in_quotes(shard) + " is not a file name in this folder");
            }
            weight_map[name] = shard;
            shards.insert(shard);
        }
        for (const std::string& shard : shards) {
            w.files_.push_back(std::make_shared<const SafetensorsFile>(SafetensorsFile::open((dir / shard).string())));
        }
        w.description_ = std::to_string(shards.size()) + " shards (" + join({shards.begin(), shards.end()}) + ")";
    } else {
        const bool pickle = fs::exists(dir / "pytorch_model.bin", ec);
        const bool pickle_shards = fs::exists(dir / "pytorch_model.bin.index.json", ec);
        if (pickle) {
            throw Error(folder + ": only pytorch_model.bin (a pickle, which headscope does not load); convert it once, "
                                 "in that folder: python3 -c \"import torch; from safetensors.torch import save_file; "
                                 "save_file({k: v.contiguous() for k, v in torch.load('pytorch_model.bin', "
                                 "map_location='cpu').items()}, 'model.safetensors', metadata={'format': 'pt'})\"");
        }
        if (pickle_shards) {
            throw Error(folder + ": only pytorch_model-*.bin shards (pickles, which headscope does not load); re-save "
                                 "the model as safetensors with transformers: "
                                 "Model.from_pretrained(folder).save_pretrained(folder, safe_serialization=True)");
        }
        throw Error(folder + ": no model.safetensors or model.safetensors.index.json");
    }

    // Every file is in place: index the tensors (views into files_, which no longer moves).
    for (const std::shared_ptr<const SafetensorsFile>& shared : w.files_) {
        const SafetensorsFile& file = *shared;
        const std::string shard = fs::path(file.path()).filename().string();
        for (const TensorView& t : file.tensors()) {
            const auto [it, inserted] = w.tensors_.emplace(t.name, Entry{&t, file.path(), shared});
            if (!inserted) {
                throw Error(file.path() + ": tensor " + in_quotes(t.name) + " is also in " + it->second.file);
            }
            if (!weight_map.empty()) {
                const auto listed = weight_map.find(t.name);
                if (listed == weight_map.end()) {
                    throw Error(file.path() + ": tensor " + in_quotes(t.name) + " is not listed in " + index);
                }
                if (listed->second != shard) {
                    throw Error(file.path() + ": tensor " + in_quotes(t.name) + " is here, but " + index +
                                " puts it in " + listed->second);
                }
            }
        }
    }
    for (const auto& [name, shard] : weight_map) {
        if (w.tensors_.find(name) == w.tensors_.end()) {
            throw Error((dir / shard).string() + ": no tensor " + in_quotes(name) + ", which " + index + " puts there");
        }
    }
    return w;
}

}   // namespace headscope
