#include "core/model_registry.h"

#include "core/error.h"
#include "core/hf_bert.h"
#include "core/hf_config.h"
#include "core/hf_gpt2.h"
#include "core/hf_vit.h"

#include <filesystem>

namespace headscope {

namespace {

constexpr std::string_view builtin_prefix = "builtin:";

} // namespace

std::vector<BuiltinModel> builtin_models() {
    return {
        {"builtin:toy-text", "text encoder, words + sinusoidal positions; heads built to show previous-token, "
                             "same-token, first-token and local patterns (E=64 H=4 L=2)"},
        {"builtin:toy-vit", "ViT-style image encoder, 16 px patches + [CLS]; heads built to show same-colour, "
                            "neighbourhood, same-row and [CLS] patterns (224 px, E=64 H=4 L=2)"},
    };
}

std::unique_ptr<Model> open_model(const std::string& path, const ToyConfig& config, const LoadControl& control) {
    if (path.rfind(builtin_prefix, 0) == 0) {
        if (path == "builtin:toy-text") return make_toy_text(config);
        if (path == "builtin:toy-vit") return make_toy_vit(config);
        std::string known;
        for (const BuiltinModel& m : builtin_models()) known += (known.empty() ? "" : ", ") + m.name;
        throw Error("--model " + path + ": no such built-in model (known: " + known + ")");
    }
    // Anything else is a Hugging Face checkpoint folder, loaded by its config's model_type.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        const std::string model_type = read_hf_model_type(path);
        if (model_type == "vit" || model_type == "deit") return load_hf_vit(path, control);
        if (model_type == "gpt2") return load_hf_gpt2(path, control);
        if (model_type == "bert") return load_hf_bert(path, control);
        throw Error(path + "/config.json: model_type '" + model_type + "' has no loader in this build");
    }
    throw Error("--model " + path + ": not a built-in model, and not a checkpoint folder (" +
                (std::filesystem::exists(path, ec) ? "a file: give the folder holding config.json and model.safetensors"
                                                    : "no such folder") +
                "; headscope-cli models lists the built-in ones)");
}

} // namespace headscope
