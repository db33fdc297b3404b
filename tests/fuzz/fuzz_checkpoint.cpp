// Feeds: a Hugging Face checkpoint folder, loaded through open_model as the app opens one
// (the families' config.json readers, the image processor's preprocessor_config.json
// reader, HfWeights, the encoder and decoder families' loaders and their weight-shape
// checks: windows, RoPE scaling, packed and per-head q/k/v, sharded weights). Byte 0 picks the base: 0 = nothing (every
// file from the input), else one of tests/checkpoints' valid tiny folders, whose files are linked in first. Byte 1
// picks what runs after a load. The rest is cut at "\n--8<--\n" into config.json, model.safetensors,
// preprocessor_config.json, tokenizer_config.json and model.safetensors.index.json (the
// sharded base's shard list); a missing or empty part keeps the base's file (or writes
// none when there is no base). So the seeds both mutate whole tiny checkpoints and
// mutate a valid checkpoint's config against its real weights.
// Asserts: loading and then encoding text, ids or an image and running a forward (with
// ablated heads, a causal override, all stages) either throws a headscope::Error or
// succeeds with consistent shapes (fuzz_model.h); on a base checkpoint's own weights and
// preprocessor config (a mutated config.json only) the maps must also be finite, rows
// summing to 1, masked pairs 0.

#include "core/models/model_registry.h"
#include "fuzz_model.h"
#include "fuzz_support.h"

#include <array>

using namespace headscope;
using namespace headscope::fuzz;

namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, 13> bases = {
    nullptr,         "gpt2_tiny",   "gpt2_tiny_f16",       "bert_tiny",
    "bert_tiny_cls", "vit_tiny",    "deit_tiny_distilled", "deit_tiny_distilled_bf16",
    "llama_tiny",    "gemma2_tiny", "phi3_tiny",           "pythia_tiny",
    "mistral_tiny",
};
constexpr std::array<const char*, 5> part_files = {"config.json", "model.safetensors", "preprocessor_config.json",
                                                   "tokenizer_config.json", "model.safetensors.index.json"};

RgbImage test_image(int width, int height) {
    RgbImage image{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3)};
    for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>(i * 37 % 251);
    return image;
}

void run_one(const Model& model, const ModelInput& input, std::uint8_t flags, bool finite_expected) {
    const ModelInfo& info = model.info();
    RunOptions options;
    if (flags & 1) options.causal = (flags & 2) != 0;
    if (flags & 4) options.detail = TraceDetail::all_stages;
    if (flags & 8) {
        options.disabled_heads = HeadMask(info.n_layers, info.n_heads);
        options.disabled_heads.set(0, 0);
    }
    const ModelTrace trace = model.forward(input, options);
    check_trace(info, input, trace, finite_expected);
    if (trace.logits.size() != 0) {
        require(trace.logits.rows() == (info.classifier ? 1 : input.embeddings.rows()), "logits rows");
        (void)model.output_label(trace.logits.cols() - 1);
    }
}

void exercise(const Model& model, std::uint8_t flags, bool finite_expected) {
    const ModelInfo& info = model.info();
    require(info.n_layers >= 1 && info.n_heads >= 1 && info.width >= 1, "a loaded model with an empty shape");
    require(info.n_heads * info.head_width == info.width, "H * Dh != E in a loaded model");
    if (info.takes_text) {
        run_expecting_errors(
            [&] { run_one(model, model.encode_text("The cat sat. [SEP] It slept."), flags, finite_expected); });
        const std::int64_t ids[] = {0, 1, 2};
        run_expecting_errors([&] { run_one(model, model.encode_ids(ids), flags, finite_expected); });
    }
    if (info.takes_image) {
        const RgbImage image = test_image(13, 9);
        run_expecting_errors([&] { run_one(model, model.encode_image(image), flags, finite_expected); });
        ImageOptions own;
        own.own_resolution = true;
        own.max_patches = 1 + (flags >> 4);
        run_expecting_errors([&] { run_one(model, model.encode_image(image, own), flags, finite_expected); });
    }
    if (flags & 16) (void)model.export_weights();
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const char* base = bases[in.u8() % bases.size()];
    const std::uint8_t flags = in.u8();
    const std::vector<std::string_view> parts = split_parts(in.rest(), part_files.size());

    const fs::path& folder = ScratchDir::get().fresh();
    if (base != nullptr) {
        const fs::path from = fs::path(HEADSCOPE_CHECKPOINTS_DIR) / base;
        for (const auto& entry : fs::directory_iterator(from))
            fs::create_symlink(entry.path(), folder / entry.path().filename());
    }
    bool own_weights = base != nullptr;   // the base's weights: finite maps expected
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].empty()) continue;
        const fs::path path = folder / part_files[i];
        std::error_code ec;
        fs::remove(path, ec);   // a link into the source tree: replace it, never write through it
        write_file(path.string(), parts[i]);
        // Other weights may hold NaN; another preprocessor config may scale pixels to 1e37,
        // finite (the loader checks that much) but past what a forward keeps finite.
        if (i == 1 || i == 2) own_weights = false;
    }

    run_expecting_errors([&] {
        const std::unique_ptr<Model> model = open_model(folder.string(), ToyConfig{});
        exercise(*model, flags, own_weights);
    });
    return 0;
}
