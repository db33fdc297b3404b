#include "core/render/map_svg.h"

#include "core/base/error.h"
#include "core/render/heatmap_image.h"
#include "core/render/visible_token.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdio>

namespace headscope {

namespace {

// Cells in user units; a viewer scales the whole picture.
constexpr int cell = 14;
constexpr int font = 10;
// Labels past this many characters are cut: a long token must not push the map away.
constexpr std::size_t label_chars = 24;

// `text` as XML character data: markup escaped, control characters and each byte that is
// not part of a whole UTF-8 character (a byte-level token cut mid-character) shown as
// U+FFFD, so the file parses.
std::string xml_text(const std::string& text, std::size_t max_chars = std::string::npos) {
    std::string out;
    const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
    auto left = static_cast<utf8proc_ssize_t>(text.size());
    std::size_t chars = 0;
    while (left > 0 && chars < max_chars) {
        utf8proc_int32_t code = 0;
        utf8proc_ssize_t used = utf8proc_iterate(bytes, left, &code);
        if (used <= 0) {
            code = 0xFFFD;
            used = 1;
        }
        if (code == '&') {
            out += "&amp;";
        } else if (code == '<') {
            out += "&lt;";
        } else if (code == '>') {
            out += "&gt;";
        } else if (code == '"') {
            out += "&quot;";
        } else {
            if (code < 0x20 || code == 0x7F) code = 0xFFFD;
            utf8proc_uint8_t encoded[4];
            const utf8proc_ssize_t n = utf8proc_encode_char(code, encoded);
            out.append(reinterpret_cast<const char*>(encoded), static_cast<std::size_t>(n));
        }
        bytes += used;
        left -= used;
        ++chars;
    }
    return out;
}

std::string hex(Rgba8 c) {
    char text[8];
    std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
    return text;
}

std::size_t longest(const std::vector<std::string>& labels) {
    std::size_t n = 0;
    for (const std::string& label : labels) n = std::max(n, std::min(label_chars, label.size()));
    return n;
}

// Label i as the window shows it (spaces and line ends visible), or "" past the labels.
std::string label_at(const std::vector<std::string>& labels, Eigen::Index i) {
    return i < static_cast<Eigen::Index>(labels.size()) ? visible_token(labels[static_cast<std::size_t>(i)]) : "";
}

// The colour bar from 0 (bottom) to scale_max (top), the masked swatch and, when the map
// holds them, the not-finite one.
void append_legend(std::string& svg, int x, int y, int height, const RenderStyle& style, bool not_finite) {
    svg += "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (int i = 0; i <= 10; ++i) {
        const float t = static_cast<float>(i) / 10.0f;
        svg += "<stop offset=\"" + std::to_string(t) + "\" stop-color=\"" + hex(colormap_lookup(style.colormap, t)) +
               "\"/>";
    }
    svg += "</linearGradient></defs>\n<g id=\"legend\" font-size=\"" + std::to_string(font) + "\">";
    const std::string xs = std::to_string(x);
    svg += "<rect x=\"" + xs + "\" y=\"" + std::to_string(y) + "\" width=\"14\" height=\"" + std::to_string(height) +
           "\" fill=\"url(#scale)\" stroke=\"#141414\"/>";
    char top[32];
    std::snprintf(top, sizeof top, "%.3g", static_cast<double>(style.scale_max));
    const std::string tx = std::to_string(x + 18);
    svg += "<text x=\"" + tx + "\" y=\"" + std::to_string(y + font) + "\">" + top + "</text>";
    svg += "<text x=\"" + tx + "\" y=\"" + std::to_string(y + height) + "\">0</text>";
    const auto swatch = [&](int sy, Rgba8 colour, const char* name) {
        svg += "<rect x=\"" + xs + "\" y=\"" + std::to_string(sy) + "\" width=\"14\" height=\"12\" fill=\"" +
               hex(colour) + "\"/><text x=\"" + tx + "\" y=\"" + std::to_string(sy + font) + "\">" + name + "</text>";
    };
    swatch(y + height + 8, masked_colour, "masked");
    if (not_finite) swatch(y + height + 26, not_finite_colour, "NaN/Inf");
    svg += "</g>\n";
}

}   // namespace

std::string render_matrix_svg(const Matrix& weights, const Mask* allowed, const std::vector<std::string>& query_labels,
                              const std::vector<std::string>& key_labels, const std::string& title,
                              const RenderStyle& style) {
    const Eigen::Index rows = weights.rows();
    const Eigen::Index cols = weights.cols();
    if (rows < 1 || cols < 1) throw Error("svg: nothing to draw (empty attention matrix)");
    if (rows * cols > max_svg_cells) {
        throw Error("svg: " + std::to_string(rows) + " x " + std::to_string(cols) + " cells is more than the " +
                    std::to_string(max_svg_cells) + " an SVG may hold; zoom in on a part, or export PNG");
    }
    // Text is about 0.6 em wide per character.
    const int left = 10 + static_cast<int>(longest(query_labels)) * font * 6 / 10 + 6;
    const int top = 30 + static_cast<int>(longest(key_labels)) * font * 6 / 10 + 6;
    const int map_w = static_cast<int>(cols) * cell;
    const int map_h = static_cast<int>(rows) * cell;
    const int width = std::max(left + map_w + 90, 20 + static_cast<int>(title.size()) * 7);
    const int height = std::max(top + map_h + 20, top + 180);
    std::string svg =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
        std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) +
        " " + std::to_string(height) +
        "\" font-family=\"DejaVu Sans, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
    svg += "<text x=\"10\" y=\"18\" font-size=\"12\">" + xml_text(title) + "</text>\n";
    const RgbaImage colours = heatmap_image(weights, allowed, style.colormap, style.scale_max);
    svg += "<g id=\"cells\" shape-rendering=\"crispEdges\">\n";
    char value[32];
    for (Eigen::Index i = 0; i < rows; ++i) {
        for (Eigen::Index j = 0; j < cols; ++j) {
            std::snprintf(value, sizeof value, "%.6g", static_cast<double>(weights(i, j)));
            const bool masked = allowed && !(*allowed)(i, j);
            svg += "<rect class=\"cell\" x=\"" + std::to_string(left + j * cell) + "\" y=\"" +
                   std::to_string(top + i * cell) + "\" width=\"" + std::to_string(cell) + "\" height=\"" +
                   std::to_string(cell) + "\" fill=\"" + hex(colours.at(static_cast<int>(j), static_cast<int>(i))) +
                   "\"><title>" + xml_text(label_at(query_labels, i), label_chars) + " \u2192 " +
                   xml_text(label_at(key_labels, j), label_chars) + ": " + (masked ? "masked" : value) +
                   "</title></rect>\n";
        }
    }
    svg += "</g>\n<g id=\"query-labels\" font-size=\"" + std::to_string(font) + "\" text-anchor=\"end\">\n";
    for (Eigen::Index i = 0; i < rows; ++i) {
        svg += "<text x=\"" + std::to_string(left - 4) + "\" y=\"" + std::to_string(top + i * cell + cell - 3) + "\">" +
               xml_text(label_at(query_labels, i), label_chars) + "</text>\n";
    }
    svg += "</g>\n<g id=\"key-labels\" font-size=\"" + std::to_string(font) + "\">\n";
    for (Eigen::Index j = 0; j < cols; ++j) {
        const std::string x = std::to_string(left + j * cell + cell - 3);
        const std::string y = std::to_string(top - 4);
        svg += "<text transform=\"translate(" + x + "," + y + ") rotate(-90)\">" +
               xml_text(label_at(key_labels, j), label_chars) + "</text>\n";
    }
    svg += "</g>\n";
    append_legend(svg, left + map_w + 16, top, std::min(map_h, 200), style, !weights.allFinite());
    svg += "</svg>\n";
    return svg;
}

}   // namespace headscope
