#pragma once
// The image processor of a Hugging Face image checkpoint: preprocessor_config.json read
// into one validated struct (ViTImageProcessor / DeiTImageProcessor: resize, DeiT's centre
// crop, rescale, normalise), and the resize and crop it asks for. Every problem is a
// headscope::Error naming the file and the field.

#include "core/image/image.h"

#include <string>

namespace headscope {

// ViTImageProcessor / DeiTImageProcessor settings from preprocessor_config.json:
// resize (Pillow), DeiT's centre crop, rescale, normalise. Defaults are those of the
// processor class the file names (image_processor_type or feature_extractor_type),
// or of the model type's processor when it names none.
struct HfImageProcessorConfig {
    std::string processor = "ViTImageProcessor";
    bool do_resize = true;
    int resize_width = 224;
    int resize_height = 224;
    Resample resample = Resample::bilinear;   // PIL code 2
    bool do_center_crop = false;              // DeiTImageProcessor only
    int crop_width = 224;
    int crop_height = 224;
    bool do_rescale = true;
    float rescale_factor = 1.0f / 255.0f;
    bool do_normalize = true;
    float image_mean[3] = {0.5f, 0.5f, 0.5f};
    float image_std[3] = {0.5f, 0.5f, 0.5f};
};

// Reads and validates `path` (a preprocessor_config.json); `model_type` picks the
// default processor. Throws naming the file and field.
HfImageProcessorConfig read_hf_image_processor_config(const std::string& path, const std::string& model_type);

// Hugging Face's centre crop (transformers.image_transforms.center_crop): the window
// of width x height whose top-left corner is ((W - width) // 2, (H - height) // 2)
// (floor division), padded with black where it reaches past the image.
RgbImage center_crop_image(const RgbImage& image, int width, int height);

// The image a ViT-family processor hands the model, before rescale and normalise:
// resized (Pillow) and, for DeiT's processor, centre-cropped.
RgbImage hf_preprocess_pixels(const RgbImage& image, const HfImageProcessorConfig& p);

}   // namespace headscope
