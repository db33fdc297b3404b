// From 8-bit RGB to what a ViT consumes: rescale + normalise to channels-first floats,
// cut into P x P patches, and embed them as a stride-P convolution would.

#include "core/base/error.h"
#include "core/image/image.h"

#include <cmath>

namespace headscope {

ImageTensor normalize_image(const RgbImage& image, float rescale, const float (&mean)[3], const float (&std)[3]) {
    const std::size_t n_pixels = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
    if (image.width <= 0 || image.height <= 0 || image.pixels.size() != n_pixels * 3) {
        throw Error("normalize: image of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                    " pixels holds " + std::to_string(image.pixels.size()) + " bytes");
    }
    for (int c = 0; c < 3; ++c) {
        if (!(std[c] != 0.0f) || !std::isfinite(std[c]) || !std::isfinite(mean[c])) {
            throw Error("normalize: channel " + std::to_string(c) + " has mean " + std::to_string(mean[c]) +
                        " and std " + std::to_string(std[c]) + "; std must be finite and non-zero");
        }
    }
    ImageTensor out;
    out.width = image.width;
    out.height = image.height;
    out.values.resize(3, static_cast<Eigen::Index>(n_pixels));   // [3, H * W]
    for (int c = 0; c < 3; ++c) {
        float* row = out.values.row(c).data();
        for (std::size_t i = 0; i < n_pixels; ++i) {
            // The order of Hugging Face's processors in float32: rescale, subtract, divide.
            row[i] =
                (static_cast<float>(image.pixels[i * 3 + static_cast<std::size_t>(c)]) * rescale - mean[c]) / std[c];
        }
    }
    return out;
}

Matrix patchify(const ImageTensor& image, int patch_size) {
    const int P = patch_size;
    if (P <= 0) throw Error("patchify: patch size must be positive, got " + std::to_string(P));
    if (image.values.rows() != 3 || image.values.cols() != static_cast<Eigen::Index>(image.width) * image.height) {
        throw Error("patchify: values are [" + std::to_string(image.values.rows()) + ", " +
                    std::to_string(image.values.cols()) + "], expected [3, " +
                    std::to_string(static_cast<long long>(image.width) * image.height) + "] for " +
                    std::to_string(image.width) + "x" + std::to_string(image.height) + " pixels");
    }
    if (image.width % P != 0 || image.height % P != 0) {
        throw Error("patchify: image of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                    " pixels is not a whole number of " + std::to_string(P) + "x" + std::to_string(P) +
                    " patches (resize it to a multiple of " + std::to_string(P) + " first)");
    }
    const int n_cols = image.width / P;   // patches per row
    const int n_patches = n_cols * (image.height / P);
    Matrix patches(n_patches, 3 * P * P);   // [N, 3 * P * P], columns (channel, row in patch, column in patch)
    for (int n = 0; n < n_patches; ++n) {
        const int top = (n / n_cols) * P, left = (n % n_cols) * P;
        float* out = patches.row(n).data();
        for (int c = 0; c < 3; ++c) {
            const float* plane = image.values.row(c).data();   // [H, W]
            for (int r = 0; r < P; ++r) {
                const float* src = plane + static_cast<std::size_t>(top + r) * image.width + left;
                for (int q = 0; q < P; ++q) *out++ = src[q];
            }
        }
    }
    return patches;
}

Matrix patch_embed(const ImageTensor& image, int patch_size, const WeightMatrix& weight, const Vector& bias) {
    const Eigen::Index patch_dim = 3 * static_cast<Eigen::Index>(patch_size) * patch_size;
    if (weight.cols() != patch_dim || weight.rows() == 0) {
        throw Error("patch_embed: weight is [" + std::to_string(weight.rows()) + ", " + std::to_string(weight.cols()) +
                    "], expected [E, " + std::to_string(patch_dim) + "] (Conv2d [E, 3, " + std::to_string(patch_size) +
                    ", " + std::to_string(patch_size) + "] flattened)");
    }
    if (bias.size() != 0 && bias.size() != weight.rows()) {
        throw Error("patch_embed: bias has " + std::to_string(bias.size()) + " values, expected " +
                    std::to_string(weight.rows()) + " (E) or none");
    }
    // The convolution's windows do not overlap (stride = kernel), so it is one GEMM.
    const Matrix patches = patchify(image, patch_size);   // [N, 3 * P * P]
    Matrix out(patches.rows(), weight.rows());            // [N, E]
    weight.multiply(patches, out, bias.size() != 0 ? &bias : nullptr);
    return out;
}

}   // namespace headscope
