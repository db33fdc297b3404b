#pragma once
// PNG files from RGBA images (stb_image_write), written atomically.

#include "core/render/heatmap_image.h"

#include <cstddef>
#include <string>
#include <vector>

namespace headscope {

std::vector<std::byte> encode_png(const RgbaImage& image);

// Throws headscope::Error naming `path` when it cannot be written; an existing file
// is then left as it was.
void write_png(const std::string& path, const RgbaImage& image);

}   // namespace headscope
