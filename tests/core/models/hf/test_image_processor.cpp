// The image processors' sizes as transformers computes them: BitImageProcessor's and
// CLIPImageProcessor's defaults and shortest-edge resize (portrait and landscape), an integer
// size read as a shortest edge there and as a square for ViT's, and the one-line refusals.

#include "core/base/error.h"
#include "core/models/hf/image_processor.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <string>

using namespace headscope;
using headscope::test::TempDir;

namespace {

HfImageProcessorConfig read_processor(const std::string& json, const std::string& model_type) {
    TempDir dir;
    const std::string path = dir.file("preprocessor_config.json");
    headscope::test::write_bytes(path, json);
    return read_hf_image_processor_config(path, model_type);
}

}   // namespace

TEST_CASE("image processor: Bit and CLIP resize the shortest edge, the longer side as int(S * long / short)") {
    const HfImageProcessorConfig bit = read_processor(R"({"image_processor_type": "BitImageProcessor"})", "dinov2");
    // BitImageProcessor's defaults: shortest edge 224, bicubic, centre crop 224, OpenAI CLIP's mean and std.
    CHECK(bit.resize_shortest_edge == 224);
    CHECK(bit.resample == Resample::bicubic);
    CHECK(bit.do_center_crop);
    CHECK(bit.crop_width == 224);
    CHECK(bit.image_mean[0] == 0.48145466f);
    CHECK(bit.image_std[2] == 0.27577711f);
    // Landscape 640 x 480 -> 298 x 224 (int(224 * 640 / 480) = 298); portrait 480 x 640 -> 224 x 298;
    // a square stays square; 37 x 29 -> int(224 * 37 / 29) = 285.
    CHECK(hf_resized_size(bit, 640, 480) == std::pair{298, 224});
    CHECK(hf_resized_size(bit, 480, 640) == std::pair{224, 298});
    CHECK(hf_resized_size(bit, 300, 300) == std::pair{224, 224});
    CHECK(hf_resized_size(bit, 37, 29) == std::pair{285, 224});
    CHECK(hf_resized_size(bit, 29, 37) == std::pair{224, 285});
    CHECK(hf_processed_size(bit) == std::pair{224, 224});
    CHECK(hf_resize_text(bit) == "shortest edge 224 bicubic");

    // An integer size is the shortest edge for Bit (get_size_dict(default_to_square=False)) ...
    const HfImageProcessorConfig edge =
        read_processor(R"({"image_processor_type": "BitImageProcessor", "size": 256, "crop_size": 200})", "dinov2");
    CHECK(edge.resize_shortest_edge == 256);
    CHECK(edge.crop_width == 200);
    CHECK(edge.crop_height == 200);
    // ... and a square for ViT's.
    const HfImageProcessorConfig vit =
        read_processor(R"({"image_processor_type": "ViTImageProcessor", "size": 64})", "vit");
    CHECK(vit.resize_shortest_edge == 0);
    CHECK(hf_resized_size(vit, 640, 480) == std::pair{64, 64});
    // CLIP's processor has Bit's defaults; the model type picks Bit's when the file names none.
    CHECK(read_processor(R"({"feature_extractor_type": "CLIPFeatureExtractor"})", "clip").resize_shortest_edge == 224);
    CHECK(read_processor("{}", "dinov2_with_registers").processor == "BitImageProcessor");
    // Without a crop, the picture's own shape comes out.
    const HfImageProcessorConfig uncropped =
        read_processor(R"({"image_processor_type": "BitImageProcessor", "do_center_crop": false})", "dinov2");
    CHECK_FALSE(hf_processed_size(uncropped).has_value());
}

TEST_CASE("image processor: a size Bit cannot read is one line naming the field") {
    CHECK_THROWS_WITH_AS(
        read_processor(R"({"image_processor_type": "BitImageProcessor", "size": {"longest_edge": 10}})", "dinov2"),
        doctest::Contains("field 'size': needs height and width, or shortest_edge alone, got keys {longest_edge}"),
        Error);
    CHECK_THROWS_WITH_AS(
        read_processor(R"({"image_processor_type": "ViTImageProcessor", "size": {"shortest_edge": 10}})", "vit"),
        doctest::Contains("field 'size': needs height and width (as ViT's and DeiT's image processors do)"), Error);
    CHECK_THROWS_WITH_AS(read_processor(R"({"image_processor_type": "Siglip2ImageProcessor"})", "vit"),
                         doctest::Contains("image processor 'Siglip2ImageProcessor' is not supported"), Error);
}
