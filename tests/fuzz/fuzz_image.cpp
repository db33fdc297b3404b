// Feeds: image decoding and preprocessing (core/image/image_decode.cpp on PNG, JPEG, GIF, BMP,
// TGA bytes; image_resize.cpp; hf_config's centre crop; image_patches.cpp) and then an
// image model's encode_image and forward. Five header bytes pick the resample filter,
// the model (builtin:toy-vit, or the trained builtin:tiny-shapes checkpoint at its own
// resolution or resized), a target size (1..256 per side), a patch size and a patch
// budget; the rest is the image file. Asserts: a headscope::Error, or a decoded image of
// 1..16384 px per side holding width * height * 3 bytes; resize and crop give exactly
// the size asked for; normalised values are finite and within the range the mean and
// std allow; patchify either refuses a size that is not whole patches or gives
// [N, 3 * P * P] holding the pixels; and the model's maps are finite, rows summing to 1.

#include "core/image/image.h"
#include "core/models/hf/image_processor.h"
#include "core/models/model_registry.h"
#include "core/models/toy/toy_models.h"
#include "fuzz_model.h"
#include "fuzz_support.h"

#include <cmath>

using namespace headscope;
using namespace headscope::fuzz;

namespace {

// Above this many pixels the preprocessing steps are skipped: their cost grows with the
// picture, and decoding a large one has been exercised already.
constexpr std::size_t max_preprocessed_pixels = std::size_t{1} << 20;

const Model& image_model(bool trained) {
    static const std::unique_ptr<Model> toy = [] {
        ToyConfig config;
        config.width = 32;
        config.image_size = 32;
        config.patch_size = 8;
        return make_toy_vit(config);
    }();
    static const std::unique_ptr<Model> tiny_shapes = open_model("builtin:tiny-shapes", ToyConfig{});
    return trained ? *tiny_shapes : *toy;
}

void check_size(const RgbImage& image, int width, int height, const char* step) {
    require(image.width == width && image.height == height, std::string(step) + " gave another size");
    require(image.pixels.size() == static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3,
            std::string(step) + " gave the wrong number of bytes");
}

void preprocess(const RgbImage& image, Resample resample, int width, int height, int P) {
    check_size(resize_image(image, width, height, resample), width, height, "resize");
    const RgbImage cropped = center_crop_image(image, width, height);
    check_size(cropped, width, height, "centre crop");

    const float mean[3] = {0.485f, 0.456f, 0.406f};
    const float std[3] = {0.229f, 0.224f, 0.225f};
    const ImageTensor values = normalize_image(cropped, 1.0f / 255.0f, mean, std);
    require(values.values.rows() == 3 && values.values.cols() == static_cast<Eigen::Index>(width) * height,
            "normalize gave the wrong shape");
    for (int c = 0; c < 3; ++c) {
        const float lo = (0.0f - mean[c]) / std[c] - 1e-4f;
        const float hi = (1.0f - mean[c]) / std[c] + 1e-4f;
        require(values.values.row(c).allFinite() && values.values.row(c).minCoeff() >= lo &&
                    values.values.row(c).maxCoeff() <= hi,
                "normalised values outside what mean and std allow");
    }
    Matrix patches;
    try {
        patches = patchify(values, P);
    } catch (const Error&) {
        require(width % P != 0 || height % P != 0, "patchify refused a whole number of patches");
        return;
    }
    require(width % P == 0 && height % P == 0, "patchify took a size that is not whole patches");
    require(patches.rows() == static_cast<Eigen::Index>(width / P) * (height / P) && patches.cols() == 3 * P * P,
            "patches are not [N, 3 * P * P]");
    // The last patch's last value is the bottom-right pixel's blue channel.
    require(patches(patches.rows() - 1, patches.cols() - 1) == values.values(2, values.values.cols() - 1),
            "the last patch does not end at the last pixel");
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const std::uint8_t flags = in.u8();
    const int width = 1 + in.u8();
    const int height = 1 + in.u8();
    const int P = 1 + in.u8() % 32;
    const int max_patches = 1 + in.u8();
    const std::string_view file = in.rest();
    constexpr Resample filters[] = {Resample::nearest, Resample::bilinear, Resample::bicubic, Resample::lanczos};

    run_expecting_errors([&] {
        const RgbImage image = decode_image_bytes(std::as_bytes(std::span(file.data(), file.size())), "input");
        require(image.width >= 1 && image.height >= 1 && image.width <= max_image_side &&
                    image.height <= max_image_side,
                "decoded size out of range");
        check_size(image, image.width, image.height, "decoding");
        if (static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) > max_preprocessed_pixels)
            return;

        run_expecting_errors([&] { preprocess(image, filters[flags & 3], width, height, P); });

        const bool trained = (flags & 4) != 0;
        const Model& model = image_model(trained);
        ImageOptions options;
        options.own_resolution = trained && (flags & 8) != 0;
        options.max_patches = max_patches;
        const ModelInput input = model.encode_image(image, options);
        RunOptions run;
        if (flags & 16) run.causal = true;
        if (flags & 32) run.detail = TraceDetail::all_stages;
        check_trace(model.info(), input, model.forward(input, run), true);
    });
    return 0;
}
