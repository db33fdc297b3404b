#include "core/model.h"

#include "core/error.h"

namespace headscope {

ModelInput Model::encode_text(std::string_view) const {
    throw Error(info().name + " takes images, not text (use --image)");
}

ModelInput Model::encode_image(const RgbImage&, const ImageOptions&) const {
    throw Error(info().name + " takes text, not images (use --text or --tokens)");
}

ModelInput Model::encode_ids(std::span<const std::int64_t>) const {
    throw Error(info().name + " takes images, not token ids (use --image)");
}

std::string Model::output_label(Eigen::Index index) const { return std::to_string(index); }

} // namespace headscope
