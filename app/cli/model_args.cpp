#include "app/cli/model_args.h"

#include "app/cli/cli_errors.h"
#include "core/base/error.h"
#include "core/base/index_lists.h"
#include "core/models/generate.h"
#include "core/models/model_part.h"
#include "core/models/model_registry.h"
#include "core/text/text.h"

namespace headscope::cli {

void add_model_options(CLI::App* cmd, ModelArgs& args, bool model_optional) {
    std::string model_types;
    for (const std::string& type : hf_supported_model_types()) model_types += (model_types.empty() ? "" : ", ") + type;
    cmd->add_option("--model", args.path,
                    "builtin:NAME (headscope-cli models lists them), or a Hugging Face checkpoint folder (model_type " +
                        model_types + ")")
        ->required(!model_optional);
    cmd->add_option("--tower", args.tower,
                    "text: a CLIP or SigLIP folder's text tower alone, a text model (its maps for --text or --tokens)")
        ->check(CLI::IsMember({"text"}));
    auto* demo = cmd->add_option_group("demo model settings", "Size and seed of builtin: models");
    demo->add_option("--width", args.config.width, "Model width E")->capture_default_str();
    demo->add_option("--heads", args.config.n_heads, "Heads H per layer")->capture_default_str();
    demo->add_option("--layers", args.config.n_layers, "Layers L")->capture_default_str();
    demo->add_option("--seed", args.config.seed, "Seed of every weight and embedding")
        ->capture_default_str()
        ->check(CLI::Validator([](std::string& text) { return seed_problem(text); }, "0..2^64-1"));
    demo->add_option("--init", args.init, "structured (heads built to show patterns) or random (as the tutorials)")
        ->capture_default_str()
        ->check(CLI::IsMember({"structured", "random"}));
    demo->add_option("--bias", args.bias, "Biases in the projections: on or off")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    demo->add_option("--arch", args.arch,
                     "toy-text's block: classic (LayerNorm, GELU, sinusoidal positions) or modern (Llama's: "
                     "RMSNorm, SwiGLU, rotary positions, 2 query heads per key/value head, causal, random weights)")
        ->capture_default_str()
        ->check(CLI::IsMember({"classic", "modern"}));
    demo->add_option("--max-tokens", args.config.max_tokens, "toy-text: longest sentence in tokens")
        ->capture_default_str();
    demo->add_option("--image-size", args.config.image_size, "toy-vit: input side in pixels")->capture_default_str();
    demo->add_option("--patch", args.config.patch_size, "toy-vit: patch size P")->capture_default_str();
}

namespace {

ToyConfig config_from(const ModelArgs& args) {
    ToyConfig config = args.config;
    config.init = args.init == "random" ? ToyInit::random : ToyInit::structured;
    config.bias = args.bias == "on";
    config.arch = args.arch == "modern" ? ToyArch::modern : ToyArch::classic;
    return config;
}

}   // namespace

std::unique_ptr<Model> open_model_from(const ModelArgs& args, Warnings& warnings) {
    auto model = model_tower(open_model(args.path, config_from(args)), args.tower);
    for (const auto& warning : model->info().warnings) warnings.add(warning);
    return model;
}

std::vector<InputPath> input_paths(const ModelArgs& model, const InputArgs* input) {
    std::vector<InputPath> paths;
    if (!model.path.starts_with("builtin:")) paths.push_back({"--model", model.path, true});
    if (input != nullptr) {
        paths.push_back({"--text-file", input->text_file, false});
        paths.push_back({"--image", input->image, false});
    }
    return paths;
}

void add_input_options(CLI::App* cmd, InputArgs& args) {
    args.text_option = cmd->add_option("--text", args.text, "A sentence");
    args.text_file_option = cmd->add_option("--text-file", args.text_file,
                                            "A sentence read from a UTF-8 text file (one final line end dropped)");
    args.image_option = cmd->add_option("--image", args.image, "An image file (PNG, JPEG, BMP, GIF, TGA)");
    args.tokens_option =
        cmd->add_option("--tokens", args.tokens, "Token ids, comma-separated (bypasses the tokenizer)");
    args.text_option->excludes(args.text_file_option)->excludes(args.image_option)->excludes(args.tokens_option);
    args.text_file_option->excludes(args.image_option)->excludes(args.tokens_option);
    args.image_option->excludes(args.tokens_option);
    auto* own = cmd->add_flag("--own-resolution", args.image_options.own_resolution,
                              "Checkpoints: run the image at its own size (whole patches), position embeddings "
                              "interpolated bicubically, as DINO does");
    cmd->add_option("--max-patches", args.image_options.max_patches,
                    "With --own-resolution: shrink larger images to at most this many patches")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 16))
        ->needs(own);
    own->needs(args.image_option);
    args.labels_option = cmd->add_option("--labels", args.labels,
                                         "CLIP, SigLIP: labels to score the image against, comma-separated "
                                         "(\"a photo of a cat,a photo of a dog\"), read by the folder's tokenizer "
                                         "(SigLIP's spiece.model: padded to 64 with </s>, as its pipeline does)");
    args.label_tokens_option = cmd->add_option("--label-tokens", args.label_tokens,
                                               "CLIP, SigLIP: the labels as token ids, each comma-separated, labels "
                                               "separated by ';' (\"49406,320,49407;49406,1929,49407\"), run as "
                                               "given (no padding added)");
    args.labels_option->excludes(args.label_tokens_option)->needs(args.image_option);
    args.label_tokens_option->needs(args.image_option);
    args.target_option = cmd->add_option("--target", args.target,
                                         "T5, BART: the text the decoder reads (teacher forcing), tokenized and "
                                         "shifted right after the decoder start token, as transformers does with "
                                         "labels; the source is --text or --tokens");
    args.target_tokens_option = cmd->add_option("--target-tokens", args.target_tokens,
                                                "T5, BART: the decoder's input ids as given, the start token "
                                                "included (\"0,5,6\")");
    args.generate_option = cmd->add_option("--generate", args.generate,
                                           "T5, BART: the target decoded greedily from the source, up to N tokens "
                                           "(1..512; stopping after the end token; the whole model runs again "
                                           "for each token)")
                               ->check(CLI::Range(1, max_generated_tokens));
    args.target_option->excludes(args.target_tokens_option)->excludes(args.generate_option);
    args.target_tokens_option->excludes(args.generate_option);
}

namespace {

// `list` cut at each `separator`, each piece trimmed; an empty piece is refused, naming `flag`.
std::vector<std::string> split_labels(const std::string& list, char separator, const std::string& flag) {
    std::vector<std::string> labels;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = std::min(list.find(separator, start), list.size());
        const std::size_t first = list.find_first_not_of(" \t\r\n", start);
        const std::size_t last = list.find_last_not_of(" \t\r\n", end == 0 ? 0 : end - 1);
        if (first >= end || last == std::string::npos || last < first) {
            throw Error(flag + ": label " + std::to_string(labels.size() + 1) +
                        " is empty; expected labels separated " + "by '" + separator + "'");
        }
        labels.push_back(list.substr(first, last - first + 1));
        if (end == list.size()) return labels;
        start = end + 1;
    }
}

}   // namespace

session::RunInput run_input_from(const InputArgs& args) {
    session::RunInput input;
    input.image_options = args.image_options;
    if (args.text_option->count() > 0) {
        input.kind = session::RunInput::Kind::sentence;
        input.text = args.text;
    } else if (args.text_file_option->count() > 0) {
        input.kind = session::RunInput::Kind::sentence;
        input.text = read_sentence_file(args.text_file);
    } else if (args.image_option->count() > 0) {
        input.kind = session::RunInput::Kind::image;
        input.image_path = args.image;
    } else if (args.tokens_option->count() > 0) {
        input.kind = session::RunInput::Kind::token_ids;
        input.text = args.tokens;
        input.ids_name = "--tokens";
    } else {
        throw Error("no input: give --text \"...\", --text-file FILE, --image FILE or --tokens 1,2,3");
    }
    if (args.labels_option->count() > 0) {
        input.labels = split_labels(args.labels, ',', "--labels");
        input.labels_name = "--labels";
        input.unscored_labels_refused = true;
    } else if (args.label_tokens_option->count() > 0) {
        input.labels = split_labels(args.label_tokens, ';', "--label-tokens");
        input.label_ids = true;
        input.labels_name = "--label-tokens";
        input.unscored_labels_refused = true;
    }
    if (args.target_option->count() > 0) {
        if (args.target.empty()) throw Error("--target: the text is empty");
        input.target = args.target;
        input.target_name = "--target";
    } else if (args.target_tokens_option->count() > 0) {
        input.target = args.target_tokens;
        input.target_ids = true;
        input.target_name = "--target-tokens";
        if (input.target.find_first_not_of(" \t\r\n") == std::string::npos)
            throw Error("--target-tokens: no ids given (expected e.g. 0,5,6)");
    }
    if (args.generate_option->count() > 0) input.generate = args.generate;
    return input;
}

void add_run_options(CLI::App* cmd, RunArgs& args) {
    cmd->add_option("--causal", args.causal, "on or off: override the model's own causal masking")
        ->check(CLI::IsMember({"on", "off"}));
    args.disable_option = cmd->add_option("--disable-heads", args.disable_heads,
                                          "Heads to ablate (zero context), as LAYER.HEAD pairs, e.g. 0.3,1.0 "
                                          "(T5, BART: the decoder's self-attention)");
    args.disable_encoder_option = cmd->add_option("--disable-encoder-heads", args.disable_encoder_heads,
                                                  "T5, BART: the encoder's heads to ablate, as LAYER.HEAD pairs");
    args.disable_cross_option =
        cmd->add_option("--disable-cross-heads", args.disable_cross_heads,
                        "T5, BART: the decoder's cross-attention heads to ablate, as LAYER.HEAD pairs");
}

namespace {

// `list` (LAYER.HEAD pairs of `flag`) as a mask of `layers` x `heads`.
HeadMask head_mask_from(const std::string& flag, const std::string& list, Eigen::Index layers, Eigen::Index heads,
                        const std::string& model) {
    HeadMask mask(layers, heads);
    for (const auto& [layer, head] : parse_layer_head_list(flag, list)) {
        if (layer >= layers || head >= heads) {
            throw Error(flag + ": " + std::to_string(layer) + "." + std::to_string(head) + " does not exist (" + model +
                        " has layers 0.." + std::to_string(layers - 1) + " and heads 0.." + std::to_string(heads - 1) +
                        ")");
        }
        mask.set(layer, head);
    }
    return mask;
}

}   // namespace

void add_kind_option(CLI::App* cmd, std::string& kind, const std::string& help) {
    cmd->add_option("--kind", kind, help)->capture_default_str()->check(CLI::IsMember({"decoder", "encoder", "cross"}));
}

session::AttentionKind kind_from(const std::string& kind, const ModelInfo& info) {
    const session::AttentionKind named = session::attention_kind_named(kind).value_or(session::AttentionKind::decoder);
    session::require_kind(info, named);
    return named;
}

RunOptions run_options_from(const RunArgs& args, const ModelInfo& info) {
    RunOptions options;
    if (!args.causal.empty()) options.causal = args.causal == "on";
    if (args.disable_option->count() > 0) {
        options.disabled_heads =
            head_mask_from("--disable-heads", args.disable_heads, info.n_layers, info.n_heads, info.name);
    }
    for (const CLI::Option* option : {args.disable_encoder_option, args.disable_cross_option}) {
        if (option->count() > 0 && !info.encoder_decoder) {
            throw Error(option->get_name() + ": " + info.name +
                        " is not an encoder-decoder model (T5, BART); --disable-heads names its heads");
        }
    }
    if (args.disable_encoder_option->count() > 0) {
        options.disabled_encoder_heads = head_mask_from("--disable-encoder-heads", args.disable_encoder_heads,
                                                        info.encoder_layers, info.n_heads, info.name);
    }
    if (args.disable_cross_option->count() > 0) {
        options.disabled_cross_heads =
            head_mask_from("--disable-cross-heads", args.disable_cross_heads, info.n_layers, info.n_heads, info.name);
    }
    return options;
}

session::Request request_from(const ModelArgs& args, session::RunInput input, const RunOptions& options,
                              session::MapsPolicy maps, const session::Keeps& keeps) {
    session::Request request;
    request.model = {args.path, config_from(args), args.tower};
    request.input = std::move(input);
    request.causal = options.causal;
    request.disabled_heads = options.disabled_heads;
    request.disabled_encoder_heads = options.disabled_encoder_heads;
    request.disabled_cross_heads = options.disabled_cross_heads;
    request.maps = maps;
    request.keeps = keeps;
    return request;
}

std::shared_ptr<const session::Snapshot> run_in_session(std::unique_ptr<Model> model, const session::Request& request,
                                                        const session::ComputeControl& control) {
    session::ModelSession session;
    session.adopt(std::move(model), request.model);
    return session.compute(request, 1, control);
}

std::shared_ptr<const session::Snapshot> run_in_session(std::unique_ptr<Model> model, const session::Request& request,
                                                        ModelInput input, const session::ComputeControl& control) {
    session::ModelSession session;
    session.adopt(std::move(model), request.model);
    return session.compute_on(request, std::move(input), 1, control);
}

}   // namespace headscope::cli
