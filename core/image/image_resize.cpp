// Image.resize of Pillow 9.4, ported so that the bytes are equal: the convolution
// resampler of libImaging/Resample.c for bilinear, bicubic and lanczos, and the affine
// nearest-neighbour scaler of libImaging/Geometry.c (ImagingScaleAffine) that
// Image.resize uses for NEAREST. Hugging Face image processors resize through Pillow, so
// a model sees these pixels; every expression below keeps Pillow's order of operations
// and types (double coefficients, float box, int truncation) because a coefficient
// that differs in its last bit can move a pixel by one level.

#include "core/base/error.h"
#include "core/image/image.h"

#include <cmath>
#include <numbers>

namespace headscope {

namespace {

// ---- filters (Resample.c): weight at distance x, in source pixels scaled by 1 / max(scale, 1)

double bilinear_filter(double x) {
    if (x < 0.0) x = -x;
    if (x < 1.0) return 1.0 - x;
    return 0.0;
}

double bicubic_filter(double x) {
    // Keys' cubic convolution with a = -0.5, written as Pillow writes it.
    constexpr double a = -0.5;
    if (x < 0.0) x = -x;
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

double sinc_filter(double x) {
    if (x == 0.0) return 1.0;
    x = x * std::numbers::pi;
    return std::sin(x) / x;
}

double lanczos_filter(double x) {
    // Sinc windowed by a sinc three times wider, truncated to [-3, 3).
    if (-3.0 <= x && x < 3.0) return sinc_filter(x) * sinc_filter(x / 3);
    return 0.0;
}

struct Filter {
    double (*weight)(double);
    double support;   // half-width in source pixels before scaling
};

Filter filter_of(Resample resample) {
    switch (resample) {
    case Resample::bilinear: return {bilinear_filter, 1.0};
    case Resample::bicubic: return {bicubic_filter, 2.0};
    case Resample::lanczos: return {lanczos_filter, 3.0};
    case Resample::nearest: break;
    }
    throw Error("resize: nearest has no convolution filter");
}

// 8 bits of result, 2 bits of headroom because the filters have negative lobes (a sum of
// weights times 255 can leave 0..255 on either side).
constexpr int precision_bits = 32 - 8 - 2;

// Pillow's clip8: the fixed-point sum shifted down, clamped to 0..255 (its lookup table
// covers -640..639 after the shift, the range the coefficients can produce).
std::uint8_t clip8(int value) {
    const int shifted = value >> precision_bits;   // arithmetic shift, as in C on gcc / clang
    if (shifted < 0) return 0;
    if (shifted > 255) return 255;
    return static_cast<std::uint8_t>(shifted);
}

// Per output pixel, the first source pixel and how many contribute, and their fixed-point
// weights: precompute_coeffs followed by normalize_coeffs_8bpc.
struct Coefficients {
    int ksize = 0;                       // weights per output pixel (the widest window)
    std::vector<int> bounds;             // [out_size, 2]: xmin, count
    std::vector<std::int32_t> weights;   // [out_size, ksize]
};

Coefficients precompute_coeffs(int in_size, float in0, float in1, int out_size, const Filter& filter) {
    // The box (in0, in1) is float in Pillow's ImagingResample; here it is the whole image.
    double scale = static_cast<double>(in1 - in0) / out_size;
    double filterscale = scale;
    if (filterscale < 1.0) filterscale = 1.0;   // enlarging: no antialiasing
    const double support = filter.support * filterscale;
    Coefficients c;
    c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
    c.bounds.resize(static_cast<std::size_t>(out_size) * 2);
    std::vector<double> kk(static_cast<std::size_t>(out_size) * c.ksize, 0.0);   // [out_size, ksize]
    for (int xx = 0; xx < out_size; ++xx) {
        const double center = in0 + (xx + 0.5) * scale;
        double ww = 0.0;
        const double ss = 1.0 / filterscale;
        // (int) truncates toward zero, as in C: these are Pillow's "round the value".
        int xmin = static_cast<int>(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = static_cast<int>(center + support + 0.5);
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        double* k = &kk[static_cast<std::size_t>(xx) * c.ksize];
        for (int x = 0; x < xmax; ++x) {
            const double w = filter.weight((x + xmin - center + 0.5) * ss);
            k[x] = w;
            ww += w;
        }
        for (int x = 0; x < xmax; ++x) {
            if (ww != 0.0) k[x] /= ww;
        }
        c.bounds[static_cast<std::size_t>(xx) * 2 + 0] = xmin;
        c.bounds[static_cast<std::size_t>(xx) * 2 + 1] = xmax;
    }
    // normalize_coeffs_8bpc: round half away from zero onto 2^22.
    c.weights.resize(kk.size());
    for (std::size_t i = 0; i < kk.size(); ++i) {
        if (kk[i] < 0) {
            c.weights[i] = static_cast<std::int32_t>(-0.5 + kk[i] * (1 << precision_bits));
        } else {
            c.weights[i] = static_cast<std::int32_t>(0.5 + kk[i] * (1 << precision_bits));
        }
    }
    return c;
}

// ImagingResampleHorizontal_8bpc on 3 bands: rows [offset, offset + out_height) of `in`.
RgbImage resample_horizontal(const RgbImage& in, int offset, int out_height, const Coefficients& c, int out_width) {
    RgbImage out;
    out.width = out_width;
    out.height = out_height;
    out.pixels.resize(static_cast<std::size_t>(out_width) * out_height * 3);
    for (int yy = 0; yy < out_height; ++yy) {
        const std::uint8_t* row = in.pixels.data() + static_cast<std::size_t>(yy + offset) * in.width * 3;
        std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(yy) * out_width * 3;
        for (int xx = 0; xx < out_width; ++xx) {
            const int xmin = c.bounds[static_cast<std::size_t>(xx) * 2 + 0];
            const int xmax = c.bounds[static_cast<std::size_t>(xx) * 2 + 1];
            const std::int32_t* k = &c.weights[static_cast<std::size_t>(xx) * c.ksize];
            int ss0 = 1 << (precision_bits - 1), ss1 = ss0, ss2 = ss0;   // +0.5 for rounding
            for (int x = 0; x < xmax; ++x) {
                const std::uint8_t* p = row + static_cast<std::size_t>(x + xmin) * 3;
                ss0 += p[0] * k[x];
                ss1 += p[1] * k[x];
                ss2 += p[2] * k[x];
            }
            dst[xx * 3 + 0] = clip8(ss0);
            dst[xx * 3 + 1] = clip8(ss1);
            dst[xx * 3 + 2] = clip8(ss2);
        }
    }
    return out;
}

// ImagingResampleVertical_8bpc on 3 bands; bounds are rows of `in`.
RgbImage resample_vertical(const RgbImage& in, const Coefficients& c, int out_height) {
    RgbImage out;
    out.width = in.width;
    out.height = out_height;
    out.pixels.resize(static_cast<std::size_t>(in.width) * out_height * 3);
    const std::size_t stride = static_cast<std::size_t>(in.width) * 3;
    for (int yy = 0; yy < out_height; ++yy) {
        const int ymin = c.bounds[static_cast<std::size_t>(yy) * 2 + 0];
        const int ymax = c.bounds[static_cast<std::size_t>(yy) * 2 + 1];
        const std::int32_t* k = &c.weights[static_cast<std::size_t>(yy) * c.ksize];
        std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(yy) * stride;
        for (std::size_t i = 0; i < stride; ++i) {
            int ss = 1 << (precision_bits - 1);
            for (int y = 0; y < ymax; ++y) ss += in.pixels[static_cast<std::size_t>(y + ymin) * stride + i] * k[y];
            dst[i] = clip8(ss);
        }
    }
    return out;
}

// ImagingResampleInner: horizontal pass first (only over the rows the vertical pass will
// read), then vertical; a pass whose dimension is unchanged is skipped.
RgbImage resample_convolution(const RgbImage& image, int width, int height, const Filter& filter) {
    const float box[4] = {0.0f, 0.0f, static_cast<float>(image.width), static_cast<float>(image.height)};
    // Pillow's test compares box[2] with the output width; with the whole image as the box
    // that is "the width changed".
    const bool need_horizontal = width != image.width || box[0] != 0.0f || box[2] != static_cast<float>(width);
    const bool need_vertical = height != image.height || box[1] != 0.0f || box[3] != static_cast<float>(height);

    Coefficients vertical = precompute_coeffs(image.height, box[1], box[3], height, filter);
    const int ybox_first = vertical.bounds[0];
    const int ybox_last = vertical.bounds[static_cast<std::size_t>(height) * 2 - 2] +
                          vertical.bounds[static_cast<std::size_t>(height) * 2 - 1];

    RgbImage current;
    const RgbImage* in = &image;
    if (need_horizontal) {
        const Coefficients horizontal = precompute_coeffs(image.width, box[0], box[2], width, filter);
        for (int i = 0; i < height; ++i) vertical.bounds[static_cast<std::size_t>(i) * 2] -= ybox_first;
        current = resample_horizontal(image, ybox_first, ybox_last - ybox_first, horizontal, width);
        in = &current;
    }
    if (need_vertical) return resample_vertical(*in, vertical, height);
    return *in;
}

// ImagingScaleAffine with a = [box width / width, 0, 0, 0, box height / height, 0]:
// samples at pixel centres, positions accumulated in double as Pillow does.
RgbImage resize_nearest(const RgbImage& image, int width, int height) {
    const double a0 = static_cast<double>(static_cast<float>(image.width) - 0.0f) / width;
    const double a4 = static_cast<double>(static_cast<float>(image.height) - 0.0f) / height;
    // COORD: -1 for negative positions, else truncation.
    const auto coord = [](double v) { return v < 0.0 ? -1 : static_cast<int>(v); };

    std::vector<int> xintab(static_cast<std::size_t>(width), 0);
    int xmin = width, xmax = 0;
    double xo = 0.0 + a0 * 0.5;
    for (int x = 0; x < width; ++x) {
        const int xin = coord(xo);
        if (xin >= 0 && xin < image.width) {
            xmax = x + 1;
            if (x < xmin) xmin = x;
            xintab[static_cast<std::size_t>(x)] = xin;
        }
        xo += a0;
    }
    RgbImage out;
    out.width = width;
    out.height = height;
    out.pixels.assign(static_cast<std::size_t>(width) * height * 3, 0);   // fill = 1: outside is black
    double yo = 0.0 + a4 * 0.5;
    for (int y = 0; y < height; ++y) {
        const int yi = coord(yo);
        if (yi >= 0 && yi < image.height) {
            const std::uint8_t* row = image.pixels.data() + static_cast<std::size_t>(yi) * image.width * 3;
            std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(y) * width * 3;
            for (int x = xmin; x < xmax; ++x) {
                const std::uint8_t* p = row + static_cast<std::size_t>(xintab[static_cast<std::size_t>(x)]) * 3;
                dst[x * 3 + 0] = p[0];
                dst[x * 3 + 1] = p[1];
                dst[x * 3 + 2] = p[2];
            }
        }
        yo += a4;
    }
    return out;
}

}   // namespace

std::string_view resample_name(Resample resample) {
    switch (resample) {
    case Resample::nearest: return "nearest";
    case Resample::bilinear: return "bilinear";
    case Resample::bicubic: return "bicubic";
    case Resample::lanczos: return "lanczos";
    }
    return "unknown";
}

std::optional<Resample> resample_from_pil_code(int code) {
    switch (code) {
    case 0: return Resample::nearest;
    case 1: return Resample::lanczos;
    case 2: return Resample::bilinear;
    case 3: return Resample::bicubic;
    default: return std::nullopt;
    }
}

RgbImage resize_image(const RgbImage& image, int width, int height, Resample resample) {
    if (image.width <= 0 || image.height <= 0 ||
        image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 3) {
        throw Error("resize: image of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                    " pixels holds " + std::to_string(image.pixels.size()) + " bytes");
    }
    if (width <= 0 || height <= 0 || width > max_image_side || height > max_image_side) {
        throw Error("resize: target size " + std::to_string(width) + "x" + std::to_string(height) + " must be 1.." +
                    std::to_string(max_image_side) + " per side");
    }
    // Image.resize returns a copy when the size does not change, whatever the filter.
    if (width == image.width && height == image.height) return image;
    if (resample == Resample::nearest) return resize_nearest(image, width, height);
    return resample_convolution(image, width, height, filter_of(resample));
}

}   // namespace headscope
