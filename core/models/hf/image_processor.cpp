#include "core/models/hf/image_processor.h"

#include "core/base/error.h"
#include "core/models/hf/config_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

namespace headscope {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// What a processor size reads as: {width, height}, or a shortest edge (width = height = 0).
struct ProcessorSize {
    int width = 0;
    int height = 0;
    int shortest_edge = 0;
};

// A processor size: an integer (square, or with `int_is_edge` the shortest edge, as
// get_size_dict(default_to_square=False) reads it), {"height": h, "width": w}, [h, w], or
// with `edge_allowed` {"shortest_edge": s}.
ProcessorSize read_size(const HfFields& f, const std::string& name, ProcessorSize fallback, bool edge_allowed,
                        bool int_is_edge) {
    const json* v = f.find(name);
    if (v == nullptr) return fallback;
    const std::int64_t hi = max_image_side;
    if (v->is_number_integer()) {
        const auto side = static_cast<int>(f.integer_value(name, *v, 1, hi));
        return int_is_edge ? ProcessorSize{0, 0, side} : ProcessorSize{side, side, 0};
    }
    if (v->is_array() && v->size() == 2) {
        const auto h = static_cast<int>(f.integer_value(name + "[0]", (*v)[0], 1, hi));
        const auto w = static_cast<int>(f.integer_value(name + "[1]", (*v)[1], 1, hi));
        return {w, h, 0};
    }
    if (v->is_object()) {
        if (v->contains("height") && v->contains("width")) {
            const auto h = static_cast<int>(f.integer_value(name + ".height", v->at("height"), 1, hi));
            const auto w = static_cast<int>(f.integer_value(name + ".width", v->at("width"), 1, hi));
            return {w, h, 0};
        }
        if (edge_allowed && v->contains("shortest_edge") && v->size() == 1) {
            return {0, 0, static_cast<int>(f.integer_value(name + ".shortest_edge", v->at("shortest_edge"), 1, hi))};
        }
        std::vector<std::string> keys;
        for (const auto& item : v->items()) keys.push_back(item.key());
        // Appended, not `std::string(literal) + ...`: GCC 12 warns of the latter (-Warray-bounds, a
        // false alarm in char_traits::copy) once the literal's size is known there.
        std::string why = edge_allowed ? "needs height and width, or shortest_edge alone"
                                       : "needs height and width (as ViT's and DeiT's image processors do)";
        why.append(", got keys {" + hf_join(keys) + "}");
        f.fail(name, why);
    }
    f.fail(name,
           edge_allowed ? "an integer, {\"height\": h, \"width\": w}, {\"shortest_edge\": s} or [h, w]"
                        : "an integer, {\"height\": h, \"width\": w} or [h, w]",
           *v);
}

// image_mean / image_std: one number for every channel, or three.
void read_channels(const HfFields& f, const std::string& name, float (&out)[3]) {
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

// The processor families this build reads: their class names' defaults differ.
enum class ProcessorKind {
    vit,      // ViTImageProcessor: resize to a size, no crop
    deit,     // DeiTImageProcessor: 256 px bicubic, centre crop 224
    bit,      // BitImageProcessor (DINOv2) and CLIPImageProcessor: shortest edge 224 bicubic, centre crop 224
    siglip,   // SiglipImageProcessor: 224x224 bicubic, no crop
};

// The processor class the file names (or `model_type`'s), with that class's defaults.
ProcessorKind read_processor_class(const HfFields& f, const std::string& model_type, HfImageProcessorConfig& p) {
    const std::string fallback = model_type == "deit" ? "DeiTImageProcessor"
                                 : model_type == "dinov2" || model_type == "dinov2_with_registers" ? "BitImageProcessor"
                                 : model_type == "clip"   ? "CLIPImageProcessor"
                                 : model_type == "siglip" ? "SiglipImageProcessor"
                                                          : "ViTImageProcessor";
    p.processor = f.string("image_processor_type", f.string("feature_extractor_type", fallback));
    const auto named = [&](const char* stem, bool feature_extractor) {
        const std::string s = stem;
        return p.processor == s + "ImageProcessor" || p.processor == s + "ImageProcessorFast" ||
               (feature_extractor && p.processor == s + "FeatureExtractor");
    };
    if (named("ViT", true)) return ProcessorKind::vit;
    if (named("DeiT", true)) {
        p.resize_width = p.resize_height = 256;
        p.resample = Resample::bicubic;
        p.do_center_crop = true;
        return ProcessorKind::deit;
    }
    if (named("Bit", false) || named("CLIP", true)) {
        p.resize_shortest_edge = 224;
        p.resample = Resample::bicubic;
        p.do_center_crop = true;
        // OPENAI_CLIP_MEAN / OPENAI_CLIP_STD, both classes' defaults.
        const float mean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
        const float std[3] = {0.26862954f, 0.26130258f, 0.27577711f};
        std::copy(mean, mean + 3, p.image_mean);
        std::copy(std, std + 3, p.image_std);
        return ProcessorKind::bit;
    }
    if (named("Siglip", false)) {   // ViT's steps and IMAGENET_STANDARD_MEAN / _STD, resampled bicubically
        p.resample = Resample::bicubic;
        return ProcessorKind::siglip;
    }
    throw Error(f.file() + ": image processor " + hf_quoted(p.processor) +
                " is not supported (supported: ViTImageProcessor, DeiTImageProcessor, BitImageProcessor, "
                "CLIPImageProcessor, SiglipImageProcessor, their Fast names, and the ViT, DeiT and CLIP "
                "FeatureExtractor names)");
}

// resample: a PIL filter code this build resizes with.
void read_resample(const HfFields& f, HfImageProcessorConfig& p) {
    const json* code = f.find("resample");
    if (code == nullptr) return;
    const auto value = static_cast<int>(f.integer_value("resample", *code, 0, 5));
    const std::optional<Resample> r = resample_from_pil_code(value);
    if (!r) {
        f.fail("resample", "PIL filter " + std::to_string(value) + (value == 4 ? " (box)" : " (hamming)") +
                               " is not supported (supported: 0 nearest, 1 lanczos, 2 bilinear, 3 bicubic)");
    }
    p.resample = *r;
}

// Pixels 0 and 255 (the extremes) must stay finite once rescaled and normalised as
// normalize_image computes them: a huge rescale_factor or a tiny image_std would make
// every pixel Inf and every attention map NaN.
void check_normalised_range(const HfFields& f, const HfImageProcessorConfig& p) {
    if (p.do_normalize) {
        for (int c = 0; c < 3; ++c) {
            if (p.image_std[c] == 0.0f) f.fail("image_std", "channel " + std::to_string(c) + " is 0");
        }
    }
    const float rescale = p.do_rescale ? p.rescale_factor : 1.0f;
    for (int c = 0; c < 3; ++c) {
        const float mean = p.do_normalize ? p.image_mean[c] : 0.0f;
        const float std = p.do_normalize ? p.image_std[c] : 1.0f;
        for (const float pixel : {0.0f, 255.0f}) {
            if (!std::isfinite((pixel * rescale - mean) / std)) {
                char formula[160];
                std::snprintf(formula, sizeof formula, "(%g * %g - %g) / %g", pixel, rescale, mean, std);
                throw Error(f.file() +
                            ": rescale_factor, image_mean and image_std take pixel values past float's range "
                            "(channel " +
                            std::to_string(c) + ": " + formula +
                            " is not finite); expected values that keep them finite");
            }
        }
    }
}

}   // namespace

HfImageProcessorConfig read_hf_image_processor_config(const std::string& path, const std::string& model_type) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        throw Error(path + ": missing; it says how images are resized and normalised (copy it from the model's "
                           "Hugging Face repository)");
    }
    const json config = read_hf_json_file(path);
    const HfFields f(config, path);
    HfImageProcessorConfig p;
    const ProcessorKind kind = read_processor_class(f, model_type, p);
    p.do_resize = f.boolean("do_resize", p.do_resize);
    const bool bit = kind == ProcessorKind::bit;
    const ProcessorSize size =
        read_size(f, "size", {p.resize_width, p.resize_height, p.resize_shortest_edge}, bit, bit);
    p.resize_width = size.width;
    p.resize_height = size.height;
    p.resize_shortest_edge = size.shortest_edge;
    read_resample(f, p);
    if (kind != ProcessorKind::vit && kind != ProcessorKind::siglip) {
        // ViT's and SigLIP's processors have no crop: they ignore these fields, as transformers does.
        p.do_center_crop = f.boolean("do_center_crop", p.do_center_crop);
        const ProcessorSize crop = read_size(f, "crop_size", {p.crop_width, p.crop_height, 0}, false, false);
        p.crop_width = crop.width;
        p.crop_height = crop.height;
    }
    p.do_rescale = f.boolean("do_rescale", p.do_rescale);
    p.rescale_factor = static_cast<float>(f.number("rescale_factor", p.rescale_factor));
    p.do_normalize = f.boolean("do_normalize", p.do_normalize);
    read_channels(f, "image_mean", p.image_mean);
    read_channels(f, "image_std", p.image_std);
    check_normalised_range(f, p);
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

std::pair<int, int> hf_resized_size(const HfImageProcessorConfig& p, int width, int height) {
    if (p.resize_shortest_edge == 0) return {p.resize_width, p.resize_height};
    // get_resize_output_image_size(default_to_square=False): int(edge * long / short), in doubles.
    const bool portrait = width <= height;
    const int short_side = portrait ? width : height;
    const int long_side = portrait ? height : width;
    const int edge = p.resize_shortest_edge;
    const auto new_long = static_cast<int>(static_cast<double>(edge) * long_side / short_side);
    return portrait ? std::pair{edge, new_long} : std::pair{new_long, edge};
}

std::optional<std::pair<int, int>> hf_processed_size(const HfImageProcessorConfig& p) {
    if (p.do_center_crop) return std::pair{p.crop_width, p.crop_height};
    if (p.do_resize && p.resize_shortest_edge == 0) return std::pair{p.resize_width, p.resize_height};
    return std::nullopt;
}

std::string hf_resize_text(const HfImageProcessorConfig& p) {
    if (!p.do_resize) return "off";
    const std::string how = p.resize_shortest_edge > 0
                                ? "shortest edge " + std::to_string(p.resize_shortest_edge)
                                : std::to_string(p.resize_width) + "x" + std::to_string(p.resize_height);
    return how + " " + std::string(resample_name(p.resample));
}

RgbImage hf_preprocess_pixels(const RgbImage& image, const HfImageProcessorConfig& p) {
    RgbImage pixels = image;
    // Pillow returns a copy when asked for the size an image already has.
    const auto [width, height] = hf_resized_size(p, image.width, image.height);
    if (p.do_resize && (image.width != width || image.height != height)) {
        if (width < 1 || height < 1 || width > max_image_side || height > max_image_side) {
            throw Error("image: " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                        " px would be resized to " + std::to_string(width) + "x" + std::to_string(height) +
                        " px (shortest edge " + std::to_string(p.resize_shortest_edge) + "), out of range");
        }
        pixels = resize_image(image, width, height, p.resample);
    }
    if (p.do_center_crop) pixels = center_crop_image(pixels, p.crop_width, p.crop_height);
    return pixels;
}

}   // namespace headscope
