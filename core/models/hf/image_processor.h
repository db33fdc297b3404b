#pragma once
// The image processor of a Hugging Face image checkpoint: preprocessor_config.json read
// into one validated struct (ViTImageProcessor / DeiTImageProcessor: resize, DeiT's centre
// crop, rescale, normalise), and the resize and crop it asks for. Every problem is a
// headscope::Error naming the file and the field.

#include "core/image/image.h"

#include <optional>
#include <string>
#include <utility>

namespace headscope {

// ViTImageProcessor / DeiTImageProcessor / BitImageProcessor (DINOv2's) / CLIPImageProcessor
// settings from preprocessor_config.json: resize (Pillow) to a size or by the shortest edge,
// a centre crop (not ViT's), rescale, normalise. Defaults are those of the processor class
// the file names (image_processor_type or feature_extractor_type), or of the model type's
// processor when it names none.
struct HfImageProcessorConfig {
    std::string processor = "ViTImageProcessor";
    bool do_resize = true;
    int resize_width = 224;
    int resize_height = 224;
    // size {"shortest_edge": S} (Bit, CLIP): the shorter side to S, the longer in proportion
    // (transformers' get_resize_output_image_size); 0: to resize_width x resize_height.
    int resize_shortest_edge = 0;
    Resample resample = Resample::bilinear;   // PIL code 2
    bool do_center_crop = false;              // DeiT's, Bit's and CLIP's processors
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

// The size `p` resizes a width x height picture to, as {width, height}.
std::pair<int, int> hf_resized_size(const HfImageProcessorConfig& p, int width, int height);

// The size of the pictures `p` hands the model, as {width, height}, when it makes one size
// of any picture (it crops, or resizes to a fixed size); nullopt when it depends on the picture.
std::optional<std::pair<int, int>> hf_processed_size(const HfImageProcessorConfig& p);

// A line of what `p` does (for `info`): "224x224 bilinear", "shortest edge 256 bicubic", "off".
std::string hf_resize_text(const HfImageProcessorConfig& p);

// The image a processor hands the model, before rescale and normalise: resized (Pillow)
// and, where it crops, centre-cropped.
RgbImage hf_preprocess_pixels(const RgbImage& image, const HfImageProcessorConfig& p);

}   // namespace headscope
