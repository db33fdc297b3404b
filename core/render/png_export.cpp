#include "core/render/png_export.h"

#include "core/base/error.h"
#include "core/base/output_file.h"

#include <cstdlib>
#include <cstring>
#include <stb_image_write.h>

// Debian's libstb exports the in-memory PNG encoder but its header declares it only
// inside the implementation section; declare it as the library defines it.
extern "C" unsigned char* stbi_write_png_to_mem(const unsigned char* pixels, int stride_bytes, int x, int y, int n,
                                                int* out_len);

namespace headscope {

std::vector<std::byte> encode_png(const RgbaImage& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.pixels.size() != static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4) {
        throw Error("PNG: image of " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                    " pixels is empty or inconsistent");
    }
    int length = 0;
    unsigned char* png =
        stbi_write_png_to_mem(image.pixels.data(), image.width * 4, image.width, image.height, 4, &length);
    if (!png) throw Error("PNG: encoding failed (out of memory?)");
    std::vector<std::byte> bytes(static_cast<std::size_t>(length));
    std::memcpy(bytes.data(), png, bytes.size());
    std::free(png);   // stb_image_write allocates with malloc (STBIW_MALLOC)
    return bytes;
}

void write_png(const std::string& path, const RgbaImage& image) { write_file_atomically(path, encode_png(image)); }

}   // namespace headscope
