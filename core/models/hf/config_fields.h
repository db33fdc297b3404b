#pragma once
// Reading a Hugging Face checkpoint's JSON files (config.json, preprocessor_config.json,
// tokenizer_config.json, model.safetensors.index.json) with clear errors: every problem
// is a headscope::Error naming the file and the field, with what was expected and what
// was found. The family readers (gpt2, bert, vit) and the shared files use these.

#include "core/nn/layers.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace headscope {

// 'name', for messages.
std::string hf_quoted(const std::string& s);
// "a, b, c", for messages.
std::string hf_join(const std::vector<std::string>& items);
// A short, non-recursive rendering of a JSON value for messages.
std::string hf_brief(const nlohmann::json& value);

// `path` parsed as a JSON object; throws when the file is missing, too large, nested too
// deep, not valid JSON or not an object.
nlohmann::json read_hf_json_file(const std::string& path);

// Reads `folder`/config.json and returns its model_type. Throws when the file is missing
// or not a JSON object, when model_type is absent, and (one line listing `supported`)
// when it is not one of `supported`.
std::string read_hf_model_type(const std::string& folder, const std::vector<std::string>& supported);

// Typed, range-checked reads of one object's fields; every error names the file and
// the field, what was expected and what was there.
class HfFields {
public:
    // `within`: where the object sits in the file, for messages ("rope_scaling."); empty at the top.
    HfFields(const nlohmann::json& object, std::string file, std::string within = "")
        : object_(object), file_(std::move(file)), within_(std::move(within)) {}

    // The field, or nullptr when it is absent or null.
    const nlohmann::json* find(const std::string& name) const;
    // Whether the file has the field at all (null included): transformers reads an absent
    // field as the class default and a null one as None.
    bool written(const std::string& name) const { return object_.contains(name); }

    [[noreturn]] void fail(const std::string& name, const std::string& expected, const nlohmann::json& got) const;
    [[noreturn]] void fail(const std::string& name, const std::string& message) const;

    std::int64_t integer(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
    std::int64_t integer_value(const std::string& name, const nlohmann::json& v, std::int64_t lo,
                               std::int64_t hi) const;
    double number(const std::string& name, double fallback) const;
    double number_value(const std::string& name, const nlohmann::json& v) const;
    bool boolean(const std::string& name, bool fallback) const;
    std::string string(const std::string& name, const std::string& fallback) const;

    const std::string& file() const { return file_; }

private:
    const nlohmann::json& object_;
    std::string file_;
    std::string within_;
};

// The MLP activation config.json's hidden_act / activation_function (`field`) names, from
// Hugging Face's ACT2FN (core/nn/layers.h): "gelu", "gelu_python" -> gelu; "gelu_new",
// "gelu_pytorch_tanh", "gelu_fast" -> gelu_tanh; "quick_gelu"; "relu"; "silu", "swish".
Activation read_hf_activation(const HfFields& f, const std::string& name, const std::string& field = "hidden_act");

// architectures[0] ("" when absent), which must be one of `known`.
std::string read_hf_architecture(const HfFields& f, const std::string& model_type,
                                 const std::vector<std::string>& known);

// A Norm epsilon: positive, and still positive as a float.
float read_hf_epsilon(const HfFields& f, const std::string& name, float fallback);

// id2label {"0": "cat", ...}, or num_labels (transformers' default 2) named LABEL_i.
std::vector<std::string> read_hf_labels(const HfFields& f);

// `config_path`: `width_field` = `width` is not divisible by `heads_field` = `heads`.
void check_hf_head_split(const std::string& config_path, std::int64_t width, const std::string& width_field,
                         std::int64_t heads, const std::string& heads_field);

}   // namespace headscope
