#include "app/gui/screenshot.h"

#include <GL/gl.h>

#include <algorithm>
#include <cstring>

namespace headscope::gui {

RgbaImage capture_framebuffer(int width, int height) {
    RgbaImage image;
    image.width = width;
    image.height = height;
    image.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, image.pixels.data());
    // OpenGL's first row is the bottom one; images start at the top.
    const std::size_t stride = static_cast<std::size_t>(width) * 4;
    for (int y = 0; y < height / 2; ++y) {
        std::swap_ranges(image.pixels.begin() + static_cast<std::ptrdiff_t>(y * stride),
                         image.pixels.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride),
                         image.pixels.begin() + static_cast<std::ptrdiff_t>((height - 1 - y) * stride));
    }
    for (std::size_t i = 3; i < image.pixels.size(); i += 4) image.pixels[i] = 255;   // opaque PNG
    return image;
}

}   // namespace headscope::gui
