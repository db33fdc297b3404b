#include "core/render/render.h"

#include "core/base/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// stb_easy_font: a public-domain, texture-free bitmap font built from quads (Debian's
// libstb-dev); its functions are static, so this file includes it whole.
#include <stb_easy_font.h>

namespace headscope {

namespace {

constexpr Rgba8 background{255, 255, 255, 255};
constexpr Rgba8 ink{20, 20, 20, 255};

// More than any screen or viewer shows whole, and 400 MB of RGBA: a grid of 64 layers x
// 16 heads of 8,192 positions would be 68 gigapixels. Refused before allocating.
constexpr std::int64_t max_picture_pixels = 100'000'000;

struct Canvas {
    RgbaImage image;

    Canvas(int width, int height) {
        if (static_cast<std::int64_t>(width) * height > max_picture_pixels) {
            throw Error("render: the picture would be " + std::to_string(width) + " x " + std::to_string(height) +
                        " px, more than the " + std::to_string(max_picture_pixels / 1'000'000) +
                        " megapixels one may have; draw one head (--view matrix) or use a shorter input");
        }
        image.width = width;
        image.height = height;
        image.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4);
        fill(0, 0, width, height, background);
    }

    void put(int x, int y, Rgba8 c) {
        if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
        std::uint8_t* p = &image.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                                         static_cast<std::size_t>(x)) *
                                        4];
        p[0] = c.r;
        p[1] = c.g;
        p[2] = c.b;
        p[3] = 255;
    }

    void fill(int x0, int y0, int x1, int y1, Rgba8 c) {
        for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y) {
            for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) put(x, y, c);
        }
    }

    void frame(int x0, int y0, int x1, int y1, Rgba8 c) {
        fill(x0, y0, x1, y0 + 1, c);
        fill(x0, y1 - 1, x1, y1, c);
        fill(x0, y0, x0 + 1, y1, c);
        fill(x1 - 1, y0, x1, y1, c);
    }

    // `source` scaled by whole `cell` pixels per source pixel, top-left at (x0, y0).
    void blit(const RgbaImage& source, int x0, int y0, int cell) {
        for (int y = 0; y < source.height * cell; ++y) {
            for (int x = 0; x < source.width * cell; ++x) put(x0 + x, y0 + y, source.at(x / cell, y / cell));
        }
    }

    // Text with its top-left at (x, y); `vertical` turns it to read bottom-up, with (x, y)
    // its bottom-left. stb_easy_font's quads are axis-aligned, so a quarter turn keeps them so.
    void text(int x, int y, const std::string& utf8, Rgba8 c, bool vertical = false) {
        std::string ascii;
        for (std::size_t i = 0; i < utf8.size(); ++i) {
            const auto byte = static_cast<unsigned char>(utf8[i]);
            if (byte < 0x80) {
                ascii += (byte >= 32 && byte < 127) ? static_cast<char>(byte) : '?';
            } else if ((byte & 0xC0) != 0x80) {
                ascii += '?';   // one '?' per non-ASCII character (at its lead byte)
            }
        }
        std::vector<char> buffer(ascii.size() * 64 * 30 + 64);   // at most ~30 quads of 64 bytes per character
        const int quads =
            stb_easy_font_print(0, 0, ascii.data(), nullptr, buffer.data(), static_cast<int>(buffer.size()));
        for (int q = 0; q < quads; ++q) {
            const auto* v = reinterpret_cast<const float*>(buffer.data() + q * 64);   // 4 vertices x 16 bytes
            const float qx0 = v[0], qy0 = v[1], qx1 = v[8], qy1 = v[9];
            if (vertical) {
                fill(x + static_cast<int>(qy0), y - static_cast<int>(qx1), x + static_cast<int>(qy1),
                     y - static_cast<int>(qx0), c);
            } else {
                fill(x + static_cast<int>(qx0), y + static_cast<int>(qy0), x + static_cast<int>(qx1),
                     y + static_cast<int>(qy1), c);
            }
        }
    }
};

// "head 3", built by appending: GCC 12 mis-warns (-Wrestrict) on "literal" + std::string.
std::string numbered(const char* prefix, int n) {
    std::string text(prefix);
    text += std::to_string(n);
    return text;
}

int text_width(const std::string& s) {
    std::string copy = s;
    return stb_easy_font_width(copy.data());
}

int widest(const std::vector<std::string>& labels, std::size_t limit) {
    int width = 0;
    for (const auto& l : labels) width = std::max(width, text_width(l.substr(0, limit)));
    return width;
}

// How wide a picture must be for its title (drawn at x = 10) to fit whole: a short
// input's matrix is narrower than "builtin:tiny-story  layer 0 head 1".
int title_width(const std::string& title) { return 10 + text_width(title) + 10; }

// A vertical colour bar [0 .. scale_max] with its two end labels, the masked swatch, and
// the not-finite one when the map holds NaN or Inf (e.g. from NaN weights).
void colour_bar(Canvas& canvas, int x, int y, int height, const RenderStyle& style, bool not_finite) {
    for (int i = 0; i < height; ++i) {
        const float t = 1.0f - static_cast<float>(i) / static_cast<float>(std::max(1, height - 1));
        canvas.fill(x, y + i, x + 14, y + i + 1, colormap_lookup(style.colormap, t));
    }
    canvas.frame(x - 1, y - 1, x + 15, y + height + 1, ink);
    char top[32];
    std::snprintf(top, sizeof top, "%.3g", static_cast<double>(style.scale_max));
    canvas.text(x + 18, y, top, ink);
    canvas.text(x + 18, y + height - 10, "0", ink);
    canvas.fill(x, y + height + 8, x + 14, y + height + 20, masked_colour);
    canvas.text(x + 18, y + height + 10, "masked", ink);
    if (not_finite) {
        canvas.fill(x, y + height + 26, x + 14, y + height + 38, not_finite_colour);
        canvas.text(x + 18, y + height + 28, "NaN/Inf", ink);
    }
}

}   // namespace

RgbaImage enlarged(const RgbaImage& image, int factor) {
    if (factor < 1) throw Error("render: a picture's scale must be 1 or more, not " + std::to_string(factor));
    Canvas canvas(image.width * factor, image.height * factor);
    canvas.blit(image, 0, 0, factor);
    return canvas.image;
}

RgbaImage render_matrix(const Matrix& weights, const Mask* allowed, const std::vector<std::string>& query_labels,
                        const std::vector<std::string>& key_labels, const std::string& title,
                        const RenderStyle& style) {
    const auto Tq = static_cast<int>(weights.rows());
    const auto Tk = static_cast<int>(weights.cols());
    if (Tq < 1 || Tk < 1) throw Error("render: nothing to draw (empty attention matrix)");
    // Cells of 2..24 px, aiming at ~720 px for the matrix; labels only while legible.
    const int cell = std::clamp(720 / std::max(Tq, Tk), 2, 24);
    const bool labelled = cell >= 10;
    constexpr std::size_t label_chars = 16;
    const int left = 10 + (labelled ? widest(query_labels, label_chars) + 6 : 0);
    const int top = 30 + (labelled ? widest(key_labels, label_chars) + 6 : 0);
    const int width = std::max(left + Tk * cell + 90, title_width(title));
    const int height = std::max(top + Tq * cell + 20, top + 180);
    Canvas canvas(width, height);
    canvas.text(10, 8, title, ink);
    canvas.blit(heatmap_image(weights, allowed, style.colormap, style.scale_max), left, top, cell);
    if (labelled) {
        for (int i = 0; i < Tq && i < static_cast<int>(query_labels.size()); ++i) {
            const std::string label = query_labels[static_cast<std::size_t>(i)].substr(0, label_chars);
            canvas.text(left - 6 - text_width(label), top + i * cell + (cell - 8) / 2, label, ink);
        }
        for (int j = 0; j < Tk && j < static_cast<int>(key_labels.size()); ++j) {
            const std::string label = key_labels[static_cast<std::size_t>(j)].substr(0, label_chars);
            canvas.text(left + j * cell + (cell - 8) / 2, top - 6, label, ink, true);
        }
    }
    colour_bar(canvas, left + Tk * cell + 16, top, std::min(Tq * cell, 200), style, !weights.allFinite());
    return canvas.image;
}

RgbaImage render_overlay(const RgbImage& image, const Matrix& weights, Eigen::Index query, int grid_width,
                         int grid_height, int n_prefix, const std::string& title, const RenderStyle& style) {
    if (grid_width < 1 || grid_height < 1 || weights.cols() != n_prefix + grid_width * grid_height) {
        throw Error("render: the overlay view needs an image model's attention over its patches");
    }
    if (query < 0 || query >= weights.rows()) {
        throw Error(numbered("render: query ", static_cast<int>(query)) + " does not exist");
    }
    const int scale = std::max(1, 448 / std::max(image.width, image.height));   // small images drawn larger
    const int top = 30;
    Canvas canvas(std::max(image.width * scale + 100, title_width(title)),
                  std::max(top + image.height * scale + 10, top + 240));
    canvas.text(10, 8, title, ink);
    const float cell_w = static_cast<float>(image.width) / static_cast<float>(grid_width);
    const float cell_h = static_cast<float>(image.height) / static_cast<float>(grid_height);
    for (int y = 0; y < image.height * scale; ++y) {
        for (int x = 0; x < image.width * scale; ++x) {
            const int ix = x / scale;
            const int iy = y / scale;
            const int gx = std::min(grid_width - 1, static_cast<int>(static_cast<float>(ix) / cell_w));
            const int gy = std::min(grid_height - 1, static_cast<int>(static_cast<float>(iy) / cell_h));
            const float w = weights(query, n_prefix + gy * grid_width + gx) / style.scale_max;
            const Rgba8 heat = colormap_lookup(style.colormap, w);
            const std::uint8_t* px =
                &image.pixels[(static_cast<std::size_t>(iy) * static_cast<std::size_t>(image.width) +
                               static_cast<std::size_t>(ix)) *
                              3];
            // Half picture, half heat: the objects stay recognisable under the map.
            const auto mix = [](std::uint8_t a, std::uint8_t b) { return static_cast<std::uint8_t>((a + b) / 2); };
            canvas.put(x, top + y, {mix(px[0], heat.r), mix(px[1], heat.g), mix(px[2], heat.b), 255});
        }
    }
    // The query's own patch (when it is one) framed in white.
    if (query >= n_prefix) {
        const auto n = static_cast<int>(query - n_prefix);
        const int x0 = static_cast<int>(static_cast<float>(n % grid_width) * cell_w * static_cast<float>(scale));
        const int y0 = static_cast<int>(static_cast<float>(n / grid_width) * cell_h * static_cast<float>(scale));
        canvas.frame(x0, top + y0, x0 + static_cast<int>(cell_w * static_cast<float>(scale)),
                     top + y0 + static_cast<int>(cell_h * static_cast<float>(scale)), {255, 255, 255, 255});
    }
    colour_bar(canvas, image.width * scale + 16, top, 200, style, !weights.row(query).allFinite());
    return canvas.image;
}

RgbaImage render_grid(const HeadMaps& maps, const OptionalMask& mask, const std::string& title,
                      const RenderStyle& style) {
    if (maps.n_layers() == 0 || maps.n_heads(0) == 0) throw Error("render: the model has no heads to draw");
    const auto L = static_cast<int>(maps.n_layers());
    const auto H = static_cast<int>(maps.n_heads(0));
    // Each map [Tq, Tk] (an encoder-decoder's cross-attention is not square) at one cell size.
    const auto rows = static_cast<int>(maps.rows(0, 0));
    const auto cols = static_cast<int>(maps.cols(0, 0));
    const int cell = std::clamp(128 / std::max(rows, cols), 1, 16);
    const int width = cols * cell;
    const int height = rows * cell;
    const int left = 40;
    const int top = 44;
    const int gap = 10;
    const int pitch = std::max(width, 48) + gap;   // room for each column's "head h" label
    Canvas canvas(std::max(left + H * pitch + 10, title_width(title)), top + L * (height + gap) + 10);
    canvas.text(10, 8, title, ink);
    const Mask* allowed = mask ? &*mask : nullptr;
    Matrix scratch;   // a streamed run's map, computed again
    for (int h = 0; h < H; ++h) canvas.text(left + h * pitch, top - 14, numbered("head ", h), ink);
    for (int l = 0; l < L; ++l) {
        canvas.text(6, top + l * (height + gap) + height / 2 - 4, numbered("L", l), ink);
        for (int h = 0; h < H; ++h) {
            const Matrix& w = maps.map(l, h, scratch);
            const float max = std::max(w.maxCoeff(), 1e-12f);   // each thumbnail on its own scale
            const int x = left + h * pitch;
            const int y = top + l * (height + gap);
            canvas.blit(heatmap_image(w, allowed, style.colormap, max), x, y, cell);
            canvas.frame(x - 1, y - 1, x + width + 1, y + height + 1, ink);
        }
    }
    return canvas.image;
}

}   // namespace headscope
