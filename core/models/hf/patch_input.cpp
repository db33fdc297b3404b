#include "core/models/hf/patch_input.h"

#include "core/base/error.h"
#include "core/models/hf/config_fields.h"
#include "core/models/hf/tensors.h"

#include <algorithm>
#include <cmath>

namespace headscope {

RgbImage own_resolution_pixels(const RgbImage& image, int P, int max_patches, Resample resample) {
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
        pixels = resize_image(image, w, h, resample);
    }
    // Whole patches only: cut the right and bottom remainders, as DINO's script does.
    return whole_patches(std::move(pixels), P);
}

RgbImage whole_patches(RgbImage pixels, int P) {
    const int w = pixels.width - pixels.width % P;
    const int h = pixels.height - pixels.height % P;
    if (w == pixels.width && h == pixels.height) return pixels;
    if (w == 0 || h == 0) {
        throw Error("image: " + std::to_string(pixels.width) + "x" + std::to_string(pixels.height) +
                    " px is smaller than one " + std::to_string(P) + " px patch");
    }
    RgbImage cut{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h * 3)};
    for (int y = 0; y < h; ++y) {
        const auto from = pixels.pixels.begin() + static_cast<std::ptrdiff_t>(y) * pixels.width * 3;
        std::copy(from, from + w * 3, cut.pixels.begin() + static_cast<std::ptrdiff_t>(y) * w * 3);
    }
    return cut;
}

Matrix normalized_patches(const RgbImage& pixels, const HfImageProcessorConfig& p, int P, const WeightMatrix& weight,
                          const Vector& bias) {
    const float zero[3] = {0.0f, 0.0f, 0.0f};
    const float one[3] = {1.0f, 1.0f, 1.0f};
    const ImageTensor values =
        normalize_image(pixels, p.do_rescale ? p.rescale_factor : 1.0f, p.do_normalize ? p.image_mean : zero,
                        p.do_normalize ? p.image_std : one);
    return patch_embed(values, P, weight, bias);
}

std::vector<std::string> patch_labels(std::vector<std::string> prefix, Eigen::Index n_patches) {
    std::vector<std::string> labels = std::move(prefix);
    for (Eigen::Index n = 0; n < n_patches; ++n) {
        std::string label = "p";
        label += std::to_string(n);
        labels.push_back(std::move(label));
    }
    return labels;
}

std::vector<std::pair<std::string, std::string>> processor_settings(const HfImageProcessorConfig& p) {
    const auto channels_text = [](const float(&v)[3]) {
        std::string text = "[";   // built in steps: GCC 12 mis-warns (-Wrestrict) on "[" + std::string
        text += hf_number_text(v[0]) + ", " + hf_number_text(v[1]) + ", " + hf_number_text(v[2]) + "]";
        return text;
    };
    return {
        {"processor", p.processor},
        {"resize", hf_resize_text(p)},
        {"center_crop",
         p.do_center_crop ? std::to_string(p.crop_width) + "x" + std::to_string(p.crop_height) : std::string("off")},
        {"rescale", p.do_rescale ? hf_number_text(p.rescale_factor) : "off"},
        {"normalize",
         p.do_normalize ? "mean " + channels_text(p.image_mean) + " std " + channels_text(p.image_std) : "off"},
    };
}

void check_patch_input(const ModelInput& input, const ModelInfo& info, int n_prefix) {
    const Eigen::Index T = input.embeddings.rows();
    if (T <= n_prefix || input.embeddings.cols() != info.width) {
        throw Error(info.name + ": input embeddings are [" + std::to_string(T) + ", " +
                    std::to_string(input.embeddings.cols()) + "], expected [" + std::to_string(n_prefix) +
                    " + patches, " + std::to_string(info.width) + "]");
    }
}

void check_processor_output(const std::string& path, const HfImageProcessorConfig& p, int image_size) {
    if (p.do_resize && p.resize_shortest_edge > 0 && !p.do_center_crop) {
        throw Error(path +
                    ": size resizes by the shortest edge and nothing crops, so pictures come out of "
                    "every shape, but config.json's image_size is " +
                    std::to_string(image_size) + " square (set do_center_crop and crop_size)");
    }
    const std::optional<std::pair<int, int>> out = hf_processed_size(p);
    if (!out) return;
    const auto [out_w, out_h] = *out;
    if (out_w != image_size || out_h != image_size) {
        throw Error(path + ": images come out " + std::to_string(out_w) + "x" + std::to_string(out_h) + " px (" +
                    (p.do_center_crop ? "crop_size" : "size") + "), but config.json's image_size is " +
                    std::to_string(image_size));
    }
}

}   // namespace headscope
