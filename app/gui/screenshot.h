#pragma once
// Reads the current OpenGL framebuffer into an RGBA image (top row first), for
// `headscope --screenshot FILE`.

#include "core/render/heatmap_image.h"

namespace headscope::gui {

RgbaImage capture_framebuffer(int width, int height);

}   // namespace headscope::gui
