#include "core/models/hf/config_fields.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/base/json_file.h"
#include "core/base/shown.h"

#include <cmath>
#include <filesystem>

namespace headscope {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Real config files are a few kilobytes (an ImageNet-21k id2label about 1 MB).
constexpr std::uintmax_t max_json_bytes = 64u << 20;
// config.json nests sub-configs a few levels deep; much deeper is hostile, and deep
// values would make recursive code (printing them) overflow the stack.
constexpr int max_json_depth = 16;

}   // namespace

std::string hf_quoted(const std::string& s) { return "'" + s + "'"; }

std::string hf_join(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text.append(text.empty() ? "" : ", ").append(item);
    return text;
}

std::string hf_brief(const json& value) {
    if (value.is_primitive()) {
        std::string text = value.dump();
        return text.size() > 40 ? text.substr(0, 40) + "..." : text;
    }
    return std::string("a JSON ") + value.type_name();
}

json read_hf_json_file(const std::string& path) {
    JsonLimits limits;
    limits.max_bytes = max_json_bytes;
    limits.max_depth = max_json_depth;
    json value = read_json_file(path, "a config file", limits);
    if (!value.is_object()) throw Error(path + ": expected a JSON object, got " + hf_brief(value));
    return value;
}

std::string read_hf_model_type(const std::string& folder, const std::vector<std::string>& supported) {
    const std::string path = (fs::path(folder) / "config.json").string();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        const std::string why = why_unreachable(path);
        if (why != "no such file") throw Error(shown(path) + ": " + why);
        throw Error(shown(folder) + ": no config.json, so not a Hugging Face checkpoint folder (expected config.json "
                                    "and model.safetensors)");
    }
    const json config = read_hf_json_file(path);
    const HfFields f(config, path);
    const json* type = f.find("model_type");
    if (type == nullptr) f.fail("model_type", "is missing (supported: " + hf_join(supported) + ")");
    if (!type->is_string()) f.fail("model_type", "a string", *type);
    const std::string name = type->get<std::string>();
    for (const std::string& s : supported) {
        if (s == name) return name;
    }
    throw Error(path + ": model_type " + hf_quoted(name) + " is not supported (supported: " + hf_join(supported) + ")");
}

const json* HfFields::find(const std::string& name) const {
    const auto it = object_.find(name);
    return (it == object_.end() || it->is_null()) ? nullptr : &*it;
}

void HfFields::fail(const std::string& name, const std::string& expected, const json& got) const {
    throw Error(file_ + ": field " + hf_quoted(within_ + name) + ": expected " + expected + ", got " + hf_brief(got));
}

void HfFields::fail(const std::string& name, const std::string& message) const {
    throw Error(file_ + ": field " + hf_quoted(within_ + name) + ": " + message);
}

std::int64_t HfFields::integer(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
    const json* v = find(name);
    if (v == nullptr) return fallback;
    return integer_value(name, *v, lo, hi);
}

std::int64_t HfFields::integer_value(const std::string& name, const json& v, std::int64_t lo, std::int64_t hi) const {
    const std::string expected = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
    if (!v.is_number_integer()) fail(name, expected, v);
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi) : v.get<std::int64_t>() > hi) {
        fail(name, expected, v);
    }
    const auto value = v.get<std::int64_t>();
    if (value < lo) fail(name, expected, v);
    return value;
}

double HfFields::number(const std::string& name, double fallback) const {
    const json* v = find(name);
    if (v == nullptr) return fallback;
    return number_value(name, *v);
}

double HfFields::number_value(const std::string& name, const json& v) const {
    if (!v.is_number()) fail(name, "a number", v);
    const double value = v.get<double>();
    if (!std::isfinite(value) || std::abs(value) > 3.0e38) fail(name, "a finite number", v);
    return value;
}

bool HfFields::boolean(const std::string& name, bool fallback) const {
    const json* v = find(name);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(name, "true or false", *v);
    return v->get<bool>();
}

std::string HfFields::string(const std::string& name, const std::string& fallback) const {
    const json* v = find(name);
    if (v == nullptr) return fallback;
    if (!v->is_string()) fail(name, "a string", *v);
    return v->get<std::string>();
}

Activation read_hf_activation(const HfFields& f, const std::string& name, const std::string& field) {
    if (name == "gelu" || name == "gelu_python") return Activation::gelu;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::gelu_tanh;
    if (name == "quick_gelu") return Activation::quick_gelu;
    if (name == "relu") return Activation::relu;
    if (name == "silu" || name == "swish") return Activation::silu;
    f.fail(field, hf_quoted(name) + " is not supported (supported: gelu, gelu_python, gelu_new, "
                                    "gelu_pytorch_tanh, gelu_fast, quick_gelu, relu, silu, swish)");
}

std::string read_hf_architecture(const HfFields& f, const std::string& model_type,
                                 const std::vector<std::string>& known) {
    const json* archs = f.find("architectures");
    if (archs == nullptr) return "";
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
        f.fail("architectures", "an array of class names", *archs);
    }
    const std::string architecture = (*archs)[0].get<std::string>();
    for (const std::string& k : known) {
        if (k == architecture) return architecture;
    }
    f.fail("architectures", hf_quoted(architecture) + " is not supported for model_type " + model_type +
                                " (supported: " + hf_join(known) + ")");
}

float read_hf_epsilon(const HfFields& f, const std::string& name, float fallback) {
    const double eps = f.number(name, fallback);
    if (!(eps > 0.0) || static_cast<float>(eps) <= 0.0f) f.fail(name, "a positive number", eps);
    return static_cast<float>(eps);
}

namespace {

// Labels LABEL_0 .. LABEL_{n-1}, for a config without id2label.
std::vector<std::string> numbered_labels(std::int64_t n) {
    std::vector<std::string> labels;
    for (std::int64_t i = 0; i < n; ++i) labels.push_back("LABEL_" + std::to_string(i));
    return labels;
}

// id2label's key: a label id in 0..n-1 written in decimal without leading zeros.
std::size_t label_id(const HfFields& f, const std::string& key, std::size_t n) {
    std::size_t id = 0;
    bool digits = !key.empty() && key.size() <= 8 && (key == "0" || key[0] != '0');
    for (char c : key) {
        digits = digits && c >= '0' && c <= '9';
        if (digits) id = id * 10 + static_cast<std::size_t>(c - '0');
    }
    if (!digits || id >= n) {
        f.fail("id2label", "key " + hf_quoted(key) + " is not a label id in 0.." + std::to_string(n - 1));
    }
    return id;
}

}   // namespace

std::vector<std::string> read_hf_labels(const HfFields& f) {
    constexpr std::int64_t max_labels = 1 << 20;
    const std::int64_t num_labels = f.integer("num_labels", -1, 0, max_labels);
    const json* id2label = f.find("id2label");
    if (id2label == nullptr) return numbered_labels(num_labels < 0 ? 2 : num_labels);
    if (!id2label->is_object()) f.fail("id2label", "an object {\"0\": \"name\", ...}", *id2label);
    if (id2label->size() > static_cast<std::size_t>(max_labels)) {
        f.fail("id2label",
               "has " + std::to_string(id2label->size()) + " entries, more than " + std::to_string(max_labels));
    }
    const std::size_t n = id2label->size();
    std::vector<std::string> labels(n);
    std::vector<bool> seen(n, false);
    for (const auto& [key, value] : id2label->items()) {
        const std::size_t id = label_id(f, key, n);
        if (!value.is_string()) f.fail("id2label", "label " + key + ": expected a string, got " + hf_brief(value));
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

void check_hf_head_split(const std::string& config_path, std::int64_t width, const std::string& width_field,
                         std::int64_t heads, const std::string& heads_field) {
    if (width % heads != 0) {
        throw Error(config_path + ": " + width_field + " = " + std::to_string(width) + " is not divisible by " +
                    heads_field + " = " + std::to_string(heads));
    }
}

}   // namespace headscope
