#include "core/models/model.h"

#include "core/base/error.h"

#include <unistd.h>

#include <cstdio>

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

void check_maps_fit_in_memory(const ModelInfo& info, Eigen::Index T) {
    const double bytes = static_cast<double>(info.n_layers) * static_cast<double>(info.n_heads) *
                         static_cast<double>(T) * static_cast<double>(T) * sizeof(float);
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return;   // unknown: let the allocator decide
    const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
    if (bytes > 0.75 * memory) {
        char text[160];
        std::snprintf(text, sizeof text, "%.1f GB for %ld x %ld maps of %ld x %ld, but this machine has %.1f GB",
                      bytes / 1e9, static_cast<long>(info.n_layers), static_cast<long>(info.n_heads),
                      static_cast<long>(T), static_cast<long>(T), memory / 1e9);
        throw Error(info.name + ": " + std::to_string(T) + " positions are too many to keep every head's map (" + text +
                    "); use a shorter input (images: --max-patches)");
    }
}

}   // namespace headscope
