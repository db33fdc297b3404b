#pragma once
// Images in: decoding (stb_image, and libjpeg-turbo for JPEG) to 8-bit RGB exactly as
// Pillow's convert("RGB") does, resizing with Pillow's resampling algorithm (so results
// equal Pillow's, as Hugging Face preprocessing uses it), rescale + normalise, and
// patchify for a ViT.

#include "core/tensor/matrix.h"
#include "core/tensor/weight_matrix.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace headscope {

// 8-bit RGB, row-major, top row first: pixels[(y * width + x) * 3 + channel].
struct RgbImage {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> pixels;   // [height, width, 3]
};

// Refused before decoding: a side over this many pixels.
inline constexpr int max_image_side = 16384;
// Refused before decoding too: more pixels than this in all (128 Mpx, every camera's
// photo). Not both sides may reach the limit: a 200-byte progressive JPEG claiming
// 16384 x 16384 would make the decoder allocate 3 GB. Pillow refuses 179 Mpx.
inline constexpr std::int64_t max_image_pixels = std::int64_t{1} << 27;

// PNG (8/16-bit; grey, grey+alpha, palette, RGB, RGBA), JPEG (baseline, progressive),
// BMP, GIF (first frame), TGA. Alpha is dropped and grey replicated, as Pillow's
// convert("RGB"), byte for byte (JPEG too: both decode it with libjpeg-turbo). Throws
// headscope::Error naming the file on a missing, unreadable, corrupt, truncated, empty
// or oversized file, on a CMYK JPEG, and on formats other than these five.
RgbImage decode_image_file(const std::string& path);
// The same from bytes in memory; `label` names the source in error messages.
RgbImage decode_image_bytes(std::span<const std::byte> bytes, const std::string& label);

// Pillow's resampling filters (PIL.Image.Resampling).
enum class Resample { nearest, bilinear, bicubic, lanczos };
std::string_view resample_name(Resample resample);
// Hugging Face's preprocessor_config "resample" codes are PIL's: 0 nearest, 1 lanczos,
// 2 bilinear, 3 bicubic. nullopt for other codes (box = 4 and hamming = 5).
std::optional<Resample> resample_from_pil_code(int code);

// PIL's Image.resize(size, resample) on an RGB image: separable, horizontal pass
// then vertical, 8-bit with Pillow's fixed-point coefficients, filter support scaled
// when shrinking (antialiasing). Equal to Pillow's output, byte for byte.
RgbImage resize_image(const RgbImage& image, int width, int height, Resample resample);

// The pixel tensor a model consumes, channels first: [3, height * width], each value
// (pixel * rescale - mean[c]) / std[c].
struct ImageTensor {
    int width = 0;
    int height = 0;
    Matrix values;   // [3, height * width]
};
ImageTensor normalize_image(const RgbImage& image, float rescale, const float (&mean)[3], const float (&std)[3]);

// Non-overlapping P x P patches in row-major patch order, each flattened in the
// order of a Conv2d weight [E, 3, P, P] row: (channel, row in patch, column in patch).
// Returns [N, 3 * P * P] with N = (height / P) * (width / P); height and width must be
// multiples of P (throws headscope::Error otherwise).
Matrix patchify(const ImageTensor& image, int patch_size);

// A stride-P convolution with kernel P as PyTorch's Conv2d(3, E, P, stride=P):
// weight [E, 3 * P * P] (the Conv2d weight [E, 3, P, P] flattened), bias [E] or
// empty. Returns [N, E], patches in row-major order.
Matrix patch_embed(const ImageTensor& image, int patch_size, const WeightMatrix& weight, const Vector& bias);

}   // namespace headscope
