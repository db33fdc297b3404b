#pragma once
// An input every fixture of tests/checkpoints and every demo model takes: a seeded
// picture of the model's own size for image models, 23 ids within every fixture's
// vocabulary for text models (for an encoder-decoder, the source, and the decoder's start
// token before 16 of them as its target).

#include "core/models/model.h"

#include <cstdint>
#include <vector>

namespace headscope::test {

inline ModelInput fixture_input(const Model& model) {
    if (model.info().takes_image) {
        RgbImage image;
        image.width = image.height = model.info().image_size;
        image.pixels.resize(static_cast<std::size_t>(image.width * image.height * 3));
        for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>(i * 37 % 251);
        return model.encode_image(image);
    }
    std::vector<std::int64_t> ids;
    for (int i = 0; i < 23; ++i) ids.push_back(5 + (i * 37) % 40);
    const ModelInput source = model.encode_ids(ids);
    if (!model.info().encoder_decoder) return source;
    std::vector<std::int64_t> target = {model.info().decoder_start_id};
    target.insert(target.end(), ids.begin(), ids.begin() + 16);
    return model.encode_target_ids(source, target);
}

}   // namespace headscope::test
