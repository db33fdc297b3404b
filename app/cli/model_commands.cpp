// `headscope-cli models`, `info`, `dump` and `export-weights`: whole models, headless.

#include "app/cli/command.h"
#include "app/cli/model_args.h"
#include "core/base/error.h"
#include "core/models/model_registry.h"
#include "core/tensor/safetensors.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace headscope::cli {

namespace {

std::string settings_json(const ModelInfo& info) { return nlohmann::json(info.settings).dump(); }

// "vit, deit": a family's model_types, as `models` lists them.
std::string joined_types(const HfFamily& family) {
    std::string text;
    for (const std::string_view type : family.model_types) text.append(text.empty() ? "" : ", ").append(type);
    return text;
}

}   // namespace

Command add_models_command(CLI::App& app) {
    CLI::App* cmd = app.add_subcommand(
        "models", "List the built-in demo models, and the checkpoint families by config.json's model_type");
    return {cmd, [](Warnings&) {
                for (const BuiltinModel& m : builtin_models()) {
                    std::printf("%-20s %s\n", m.name.c_str(), m.description.c_str());
                }
                std::printf("\nHugging Face checkpoint folders (--model FOLDER), by config.json's model_type:\n");
                for (const HfFamily& family : hf_families()) {
                    std::printf("%-20s %.*s\n", joined_types(family).c_str(),
                                static_cast<int>(family.description.size()), family.description.data());
                }
                return 0;
            }};
}

Command add_info_command(CLI::App& app) {
    auto args = std::make_shared<ModelArgs>();
    CLI::App* cmd = app.add_subcommand("info", "Describe a model: architecture, size and what each head does");
    add_model_options(cmd, *args);
    return {cmd, [args](Warnings& warnings) {
                const auto model = open_model_from(*args, warnings);
                const ModelInfo& info = model->info();
                std::printf("%s: %s\n", info.name.c_str(), info.description.c_str());
                std::printf("input: %s\n", info.takes_text ? "text" : "image");
                if (info.takes_image) {
                    const long patches =
                        static_cast<long>(info.image_size / info.patch_size) * (info.image_size / info.patch_size);
                    std::printf("image: %d x %d px, patches %d x %d px: %ld patches + %ld prefix token(s)\n",
                                info.image_size, info.image_size, info.patch_size, info.patch_size, patches,
                                static_cast<long>(info.max_tokens) - patches);
                } else {
                    std::printf("max tokens: %ld\n", static_cast<long>(info.max_tokens));
                }
                std::printf("layers L = %ld, heads H = %ld, width E = %ld, head width Dh = %ld, MLP width = %ld\n",
                            static_cast<long>(info.n_layers), static_cast<long>(info.n_heads),
                            static_cast<long>(info.width), static_cast<long>(info.head_width),
                            static_cast<long>(info.mlp_width));
                std::printf("parameters: %lld\n", static_cast<long long>(info.n_parameters));
                std::printf("causal: %s\n", info.causal ? "yes" : "no");
                std::printf("settings: %s\n", settings_json(info).c_str());
                if (info.head_roles.empty()) {
                    // A checkpoint's heads have no built role; what they do depends on the input.
                    std::printf("heads: learned; `headscope-cli analyze` measures what each does on an input\n");
                    return 0;
                }
                std::printf("heads:\n");
                for (std::size_t l = 0; l < info.head_roles.size(); ++l) {
                    for (std::size_t h = 0; h < info.head_roles[l].size(); ++h) {
                        const std::string& role = info.head_roles[l][h];
                        std::printf("  %zu.%zu  %s\n", l, h,
                                    role.empty() ? "(random weights: no built-in role)" : role.c_str());
                    }
                }
                return 0;
            }};
}

Command add_dump_command(CLI::App& app) {
    struct Args {
        ModelArgs model;
        InputArgs input;
        RunArgs run;
        std::string out;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("dump", "Every head of every layer of a model on one input, to .safetensors");
    add_model_options(cmd, args->model);
    add_input_options(cmd, args->input);
    add_run_options(cmd, args->run);
    cmd->add_option("--out", args->out,
                    "Output .safetensors: attn.L [H, T, T] per layer, input_ids I64 [T] for text, "
                    "logits where the model has a head; metadata 'tokens' (JSON array of labels)")
        ->required();
    return {cmd, [args](Warnings& warnings) {
                check_output("--out", args->out, input_paths(args->model, &args->input));
                const auto model = open_model_from(args->model, warnings);
                const ModelInput input = encode_input(*model, args->input);
                // The maps are copied out and encoded whole before writing: three times in memory.
                check_maps_fit_in_memory(model->info(), input.embeddings.rows(), 3);
                const RunOptions options = run_options_from(args->run, model->info());
                const ModelTrace trace = model->forward(input, options);

                const auto T = static_cast<std::int64_t>(input.labels.size());
                const auto H = static_cast<std::int64_t>(model->info().n_heads);
                std::vector<std::vector<float>> maps(trace.layers.size());   // [L] of [H, T, T]
                std::vector<TensorToWrite> tensors;
                for (std::size_t l = 0; l < trace.layers.size(); ++l) {
                    for (const HeadTrace& head : trace.layers[l].heads) {
                        maps[l].insert(maps[l].end(), head.weights.data(), head.weights.data() + head.weights.size());
                    }
                    tensors.push_back(tensor_f32("attn." + std::to_string(l), {H, T, T}, maps[l]));
                }
                if (!input.ids.empty()) tensors.push_back(tensor_i64("input_ids", {T}, input.ids));
                if (trace.logits.size() != 0) {
                    // CLI.md: [T, V] for a language-model head, [num_labels] for a classifier.
                    const bool classifier = model->info().classifier;
                    const Shape shape =
                        classifier ? Shape{trace.logits.cols()} : Shape{trace.logits.rows(), trace.logits.cols()};
                    tensors.push_back(tensor_f32(
                        "logits", shape,
                        std::span<const float>(trace.logits.data(), static_cast<std::size_t>(trace.logits.size()))));
                }
                const std::map<std::string, std::string> metadata = {
                    {"tokens", nlohmann::json(input.labels).dump()},
                    {"model", model->info().name},
                    {"settings", settings_json(model->info())},
                    {"causal", options.causal.value_or(model->info().causal) ? "on" : "off"},
                };
                write_safetensors(args->out, tensors, metadata);
                std::printf("wrote %s: %zu layers x %ld heads, T = %ld\n", args->out.c_str(), trace.layers.size(),
                            static_cast<long>(H), static_cast<long>(T));
                return 0;
            }};
}

Command add_export_weights_command(CLI::App& app) {
    struct Args {
        ModelArgs model;
        std::string out;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("export-weights", "Write every weight of a built-in model, so a reference "
                                                         "implementation can run the same model");
    add_model_options(cmd, args->model);
    cmd->add_option("--out", args->out, "Output .safetensors (F32)")->required();
    return {cmd, [args](Warnings& warnings) {
                check_output("--out", args->out, input_paths(args->model));
                const auto model = open_model_from(args->model, warnings);
                const std::vector<OwnedTensor> owned = model->export_weights();
                std::vector<TensorToWrite> tensors;
                for (const OwnedTensor& t : owned) tensors.push_back(tensor_f32(t.name, t.shape, t.values));
                write_safetensors(args->out, tensors,
                                  {{"model", model->info().name}, {"settings", settings_json(model->info())}});
                std::printf("wrote %s: %zu tensors, %lld parameters\n", args->out.c_str(), owned.size(),
                            static_cast<long long>(model->info().n_parameters));
                return 0;
            }};
}

}   // namespace headscope::cli
