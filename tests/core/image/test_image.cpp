// Images against Pillow and PyTorch: the files of tools/make_image_golden.py. Decoding
// equals Pillow's convert("RGB") byte for byte (JPEG too: both use libjpeg-turbo), every
// resize equals Pillow's Image.resize byte for byte, normalisation and the patch
// embedding equal PyTorch's within 1e-5; broken files fail with one line naming them.

#include "core/base/error.h"
#include "core/image/grid_resize.h"
#include "core/image/image.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <vector>

using namespace headscope;

namespace {

std::string images_dir() { return HEADSCOPE_IMAGES_DIR; }
std::string image_golden_dir() { return test::golden_dir() + "/images"; }

nlohmann::json image_manifest() {
    std::ifstream in(image_golden_dir() + "/cases.json");
    REQUIRE_MESSAGE(in.good(), "missing " << image_golden_dir() << "/cases.json (run tools/make_image_golden.py)");
    return nlohmann::json::parse(in);
}

// A U8 [H, W, 3] golden tensor as an image.
RgbImage golden_image(const SafetensorsFile& file, const std::string& name) {
    const TensorView& view = file.get(name);
    REQUIRE(view.dtype == DType::U8);
    REQUIRE(view.shape.size() == 3);
    REQUIRE(view.shape[2] == 3);
    RgbImage image;
    image.height = static_cast<int>(view.shape[0]);
    image.width = static_cast<int>(view.shape[1]);
    image.pixels.resize(view.bytes.size());
    std::memcpy(image.pixels.data(), view.bytes.data(), view.bytes.size());
    return image;
}

// A float golden tensor of any rank as [rows, size / rows].
Matrix golden_matrix(const SafetensorsFile& file, const std::string& name, Eigen::Index rows) {
    const std::vector<float> values = file.get(name).to_floats();
    return ConstMatrixMap(values.data(), rows, static_cast<Eigen::Index>(values.size()) / rows);
}

struct PixelDiff {
    bool same_size = false;
    std::size_t n_differ = 0;   // bytes (channel values) that differ
    int max = 0;
    double mean = 0.0;
};

PixelDiff compare_pixels(const RgbImage& ours, const RgbImage& theirs) {
    PixelDiff d;
    d.same_size =
        ours.width == theirs.width && ours.height == theirs.height && ours.pixels.size() == theirs.pixels.size();
    if (!d.same_size) return d;
    double total = 0.0;
    for (std::size_t i = 0; i < ours.pixels.size(); ++i) {
        const int diff = std::abs(int(ours.pixels[i]) - int(theirs.pixels[i]));
        d.n_differ += diff != 0;
        d.max = std::max(d.max, diff);
        total += diff;
    }
    d.mean = ours.pixels.empty() ? 0.0 : total / static_cast<double>(ours.pixels.size());
    return d;
}

std::string size_of(const RgbImage& image) { return std::to_string(image.width) + "x" + std::to_string(image.height); }

// The error message of decoding `path`, or "" when it decodes.
std::string decode_error(const std::string& path) {
    try {
        decode_image_file(path);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

std::span<const std::byte> as_bytes(const std::string& s) { return std::as_bytes(std::span<const char>(s)); }

}   // namespace

// JPEG too: it is decoded by libjpeg-turbo, as Pillow decodes it (core/image/image_decode.cpp).
TEST_CASE("image decode: every PNG, JPEG, BMP, GIF and TGA equals Pillow's convert(\"RGB\") exactly") {
    const auto manifest = image_manifest();
    const auto golden = SafetensorsFile::open(image_golden_dir() + "/decode.safetensors");
    int n_checked = 0;
    int n_jpeg = 0;
    for (const auto& c : manifest.at("decode")) {
        n_jpeg += c.at("jpeg").get<bool>() ? 1 : 0;
        const std::string file = c.at("file").get<std::string>();
        CAPTURE(file);
        const RgbImage ours = decode_image_file(images_dir() + "/" + file);
        const RgbImage theirs = golden_image(golden, c.at("tensor").get<std::string>());
        const PixelDiff d = compare_pixels(ours, theirs);
        REQUIRE_MESSAGE(d.same_size, file << ": decoded " << size_of(ours) << ", Pillow " << size_of(theirs));
        CHECK_MESSAGE(d.n_differ == 0, file << ": " << d.n_differ << " of " << ours.pixels.size()
                                            << " bytes differ from Pillow, max |diff| = " << d.max);
        ++n_checked;
    }
    CHECK(n_checked >= 23);
    CHECK(n_jpeg == 3);   // baseline, progressive, grey
}

TEST_CASE("image decode: bytes in memory decode as the file does") {
    const std::string path = images_dir() + "/palette_trns.png";
    const std::string bytes = test::read_bytes(path);
    const RgbImage from_file = decode_image_file(path);
    const RgbImage from_bytes = decode_image_bytes(as_bytes(bytes), "clipboard");
    CHECK(compare_pixels(from_file, from_bytes).same_size);
    CHECK(from_file.pixels == from_bytes.pixels);
    CHECK(from_file.width == 37);
    CHECK(from_file.height == 29);
    try {
        decode_image_bytes(as_bytes(bytes.substr(0, 100)), "clipboard");
        FAIL("a truncated PNG decoded");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).rfind("clipboard: ", 0) == 0);
    }
}

TEST_CASE("image decode: every broken file is one error line naming the file and the problem") {
    const auto manifest = image_manifest();
    int n_checked = 0;
    for (const auto& c : manifest.at("broken")) {
        const std::string path = images_dir() + "/" + c.at("file").get<std::string>();
        CAPTURE(path);
        const std::string message = decode_error(path);
        REQUIRE_MESSAGE(!message.empty(), path << " decoded without an error");
        CHECK(message.rfind(path + ": ", 0) == 0);
        CHECK(message.find('\n') == std::string::npos);
        CHECK_MESSAGE(message.find(c.at("mentions").get<std::string>()) != std::string::npos, message);
        ++n_checked;
    }
    CHECK(n_checked >= 10);

    // The oversized header states its size and the limit; it is refused before decoding.
    const std::string huge = decode_error(images_dir() + "/broken/huge.png");
    CHECK(huge.find("20000x20000") != std::string::npos);
    CHECK(huge.find(std::to_string(max_image_side)) != std::string::npos);
}

TEST_CASE("image decode: missing files and folders are refused by name") {
    test::TempDir dir;
    const std::string missing = dir.file("nothing-here.png");
    CHECK(decode_error(missing) == missing + ": no such file");
    const std::string folder = dir.path().string();
    CHECK(decode_error(folder).rfind(folder + ": is a directory", 0) == 0);
    // A named pipe called *.png (found by the GUI soak: reading it blocked the worker for
    // good) is refused before it is opened. Bounded here: after 10 s a writer that closes at
    // once lets a blocked read end.
    const std::string pipe = dir.file("pipe.png");
    REQUIRE(mkfifo(pipe.c_str(), 0600) == 0);
    auto refused = std::async(std::launch::async, [&] { return decode_error(pipe); });
    if (refused.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        FAIL_CHECK("decoding a named pipe blocked for 10 s");
        std::ofstream{pipe};
    }
    CHECK(refused.get() == pipe + ": not a regular file, expected an image file");

    // Formats stb_image reads but Pillow reads differently are refused by name.
    const std::string pgm = dir.file("grey.pgm");
    test::write_bytes(pgm, std::string("P5\n2 2\n255\n") + std::string(4, '\x80'));
    CHECK(decode_error(pgm) == pgm + ": unsupported image format (PNM); expected PNG, JPEG, BMP, GIF or TGA");
}

TEST_CASE("image decode: hostile bytes (cut files, random damage) never crash") {
    // Each image, cut at many lengths and with bytes overwritten at random: decoding may
    // succeed or throw headscope::Error, nothing else. Cut PNG and JPEG files are always
    // refused (both formats end with a marker this decoder requires).
    std::mt19937 rng(7);
    const auto manifest = image_manifest();
    int n_tries = 0;
    for (const auto& c : manifest.at("decode")) {
        const std::string file = c.at("file").get<std::string>();
        CAPTURE(file);
        const std::string bytes = test::read_bytes(images_dir() + "/" + file);
        const bool must_refuse_prefix = file.ends_with(".png") || file.ends_with(".jpg");
        for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 60) {
            CAPTURE(cut);
            bool refused = false;
            try {
                decode_image_bytes(as_bytes(bytes.substr(0, cut)), file);
            } catch (const Error&) {
                refused = true;
            }
            if (must_refuse_prefix) CHECK(refused);
            ++n_tries;
        }
        std::uniform_int_distribution<std::size_t> position(0, bytes.size() - 1);
        std::uniform_int_distribution<int> value(0, 255);
        for (int trial = 0; trial < 40; ++trial) {
            std::string damaged = bytes;
            const int n_damaged = 1 + trial % 8;
            for (int i = 0; i < n_damaged; ++i) damaged[position(rng)] = static_cast<char>(value(rng));
            CAPTURE(trial);
            try {
                const RgbImage image = decode_image_bytes(as_bytes(damaged), file);
                CHECK(image.pixels.size() == std::size_t(image.width) * std::size_t(image.height) * 3);
            } catch (const Error&) {}
            ++n_tries;
        }
    }
    CHECK(n_tries > 1000);
}

TEST_CASE("image resize: every golden case equals Pillow's Image.resize byte for byte") {
    const auto manifest = image_manifest();
    const auto decoded = SafetensorsFile::open(image_golden_dir() + "/decode.safetensors");
    const auto golden = SafetensorsFile::open(image_golden_dir() + "/resize.safetensors");
    int n_checked = 0;
    for (const auto& c : manifest.at("resize")) {
        const std::string name = c.at("tensor").get<std::string>();
        CAPTURE(name);
        const std::string filter = c.at("filter").get<std::string>();
        Resample resample = Resample::nearest;
        for (Resample r : {Resample::nearest, Resample::bilinear, Resample::bicubic, Resample::lanczos}) {
            if (resample_name(r) == filter) resample = r;
        }
        REQUIRE(resample_name(resample) == filter);
        const RgbImage source = golden_image(decoded, c.at("source").get<std::string>());
        const RgbImage ours = resize_image(source, c.at("width").get<int>(), c.at("height").get<int>(), resample);
        const RgbImage theirs = golden_image(golden, name);
        const PixelDiff d = compare_pixels(ours, theirs);
        REQUIRE_MESSAGE(d.same_size, name << ": resized to " << size_of(ours) << ", Pillow " << size_of(theirs));
        CHECK_MESSAGE(d.n_differ == 0, name << ": " << d.n_differ << " of " << ours.pixels.size()
                                            << " bytes differ from Pillow, max |diff| = " << d.max);
        ++n_checked;
    }
    CHECK(n_checked >= 40);
}

TEST_CASE("image resize: filter names, Hugging Face's PIL codes and bad sizes") {
    CHECK(resample_from_pil_code(0) == Resample::nearest);
    CHECK(resample_from_pil_code(1) == Resample::lanczos);
    CHECK(resample_from_pil_code(2) == Resample::bilinear);
    CHECK(resample_from_pil_code(3) == Resample::bicubic);
    CHECK_FALSE(resample_from_pil_code(4).has_value());   // box
    CHECK_FALSE(resample_from_pil_code(5).has_value());   // hamming
    CHECK(resample_name(Resample::bicubic) == "bicubic");

    RgbImage image;
    image.width = 2;
    image.height = 1;
    image.pixels = {10, 20, 30, 40, 50, 60};
    CHECK_THROWS_AS(resize_image(image, 0, 4, Resample::bilinear), Error);
    CHECK_THROWS_AS(resize_image(image, 4, max_image_side + 1, Resample::bilinear), Error);
    image.pixels.pop_back();
    CHECK_THROWS_AS(resize_image(image, 4, 4, Resample::bilinear), Error);
}

TEST_CASE("image normalize: ViT and ImageNet constants equal PyTorch within 1e-5") {
    const auto manifest = image_manifest();
    const auto decoded = SafetensorsFile::open(image_golden_dir() + "/decode.safetensors");
    const auto golden = SafetensorsFile::open(image_golden_dir() + "/normalize.safetensors");
    int n_checked = 0;
    for (const auto& c : manifest.at("normalize")) {
        const std::string name = c.at("tensor").get<std::string>();
        CAPTURE(name);
        const auto mean_values = c.at("mean").get<std::vector<float>>();
        const auto std_values = c.at("std").get<std::vector<float>>();
        REQUIRE(mean_values.size() == 3);
        REQUIRE(std_values.size() == 3);
        const float mean[3] = {mean_values[0], mean_values[1], mean_values[2]};
        const float std[3] = {std_values[0], std_values[1], std_values[2]};
        const RgbImage source = golden_image(decoded, c.at("source").get<std::string>());
        const ImageTensor ours = normalize_image(source, c.at("rescale").get<float>(), mean, std);
        CHECK(ours.width == source.width);
        CHECK(ours.height == source.height);
        const double diff = test::max_abs_diff(ours.values, golden_matrix(golden, name, 3));
        CHECK_MESSAGE(diff <= test::golden_tolerance, name << ": max |diff| = " << diff);
        ++n_checked;
    }
    CHECK(n_checked == 2);

    RgbImage grey;
    grey.width = grey.height = 1;
    grey.pixels = {1, 2, 3};
    const float zero_std[3] = {1.0f, 0.0f, 1.0f};
    const float mean[3] = {0.0f, 0.0f, 0.0f};
    CHECK_THROWS_AS(normalize_image(grey, 1.0f, mean, zero_std), Error);
}

TEST_CASE("image patchify: patch order and flattening by hand") {
    // A 4 x 2 image (W = 4, H = 2), value = 100 * channel + pixel index, cut into 2 x 2
    // patches: patch 0 is columns 0-1, patch 1 columns 2-3; each is flattened as
    // (channel, row in patch, column in patch), the order of a Conv2d weight.
    ImageTensor image;
    image.width = 4;
    image.height = 2;
    image.values.resize(3, 8);
    for (int c = 0; c < 3; ++c) {
        for (int i = 0; i < 8; ++i) image.values(c, i) = float(100 * c + i);
    }
    Matrix expected(2, 12);
    expected << 0, 1, 4, 5, 100, 101, 104, 105, 200, 201, 204, 205,   //
        2, 3, 6, 7, 102, 103, 106, 107, 202, 203, 206, 207;
    const Matrix patches = patchify(image, 2);
    REQUIRE(patches.rows() == 2);
    REQUIRE(patches.cols() == 12);
    CHECK(patches == expected);

    // One patch covering everything is the channel planes one after another.
    ImageTensor square;
    square.width = square.height = 2;
    square.values.resize(3, 4);
    square.values << 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
    const Matrix one = patchify(square, 2);
    REQUIRE(one.rows() == 1);
    CHECK(one == Eigen::Map<const Matrix>(square.values.data(), 1, 12));
}

TEST_CASE("image patchify: sizes not a multiple of P are refused") {
    ImageTensor image;
    image.width = 37;
    image.height = 29;
    image.values = Matrix::Zero(3, 37 * 29);
    CHECK_THROWS_AS(patchify(image, 16), Error);
    image.width = 64;
    image.height = 48;
    image.values = Matrix::Zero(3, 64 * 48);
    CHECK_THROWS_AS(patchify(image, 10), Error);   // 64 is not a multiple of 10
    CHECK_THROWS_AS(patchify(image, 0), Error);
    CHECK(patchify(image, 16).rows() == 12);
    try {
        patchify(image, 10);
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("64x48") != std::string::npos);
    }
    image.values = Matrix::Zero(3, 10);   // values of the wrong size
    CHECK_THROWS_AS(patchify(image, 16), Error);
}

TEST_CASE("image patchify and patch_embed equal PyTorch's unfold and Conv2d within 1e-5") {
    const auto manifest = image_manifest();
    const auto normalized = SafetensorsFile::open(image_golden_dir() + "/normalize.safetensors");
    const auto golden = SafetensorsFile::open(image_golden_dir() + "/patch.safetensors");
    ImageTensor image;
    image.width = 64;
    image.height = 48;
    image.values = golden_matrix(normalized, "rgb.png:vit", 3);   // [3, H * W]
    REQUIRE(image.values.cols() == 64 * 48);
    int n_checked = 0;
    for (const auto& c : manifest.at("patch")) {
        const int P = c.at("patch_size").get<int>();
        const int E = c.at("embed_dim").get<int>();
        CAPTURE(P);
        const std::string p = "_p" + std::to_string(P);
        const Eigen::Index N = (64 / P) * (48 / P);
        const Matrix weight = golden_matrix(golden, "weight" + p, E);   // [E, 3 * P * P]
        const Matrix bias_row = golden_matrix(golden, "bias" + p, 1);   // [1, E]
        const Vector bias = bias_row.transpose();

        const double patch_diff = test::max_abs_diff(patchify(image, P), golden_matrix(golden, "patches" + p, N));
        CHECK_MESSAGE(patch_diff == 0.0, "patchify P = " << P << ": max |diff| = " << patch_diff);

        const Matrix embed = patch_embed(image, P, weight, bias);   // [N, E]
        const double diff = test::max_abs_diff(embed, golden_matrix(golden, "embed" + p, N));
        CHECK_MESSAGE(diff <= test::golden_tolerance, "patch_embed P = " << P << ": max |diff| = " << diff);

        const Matrix embed_nobias = patch_embed(image, P, weight, Vector());
        const double diff_nobias = test::max_abs_diff(embed_nobias, golden_matrix(golden, "embed_nobias" + p, N));
        CHECK_MESSAGE(diff_nobias <= test::golden_tolerance, "no bias, P = " << P << ": max |diff| = " << diff_nobias);

        CHECK_THROWS_AS(patch_embed(image, P, weight.leftCols(weight.cols() - 1), bias), Error);
        CHECK_THROWS_AS(patch_embed(image, P, weight, Vector::Zero(E + 1)), Error);
        ++n_checked;
    }
    CHECK(n_checked == 2);
}

TEST_CASE("resize_grid_bicubic: PyTorch's bicubic on hand-computed cells, and identity at the same size") {
    // A 2 x 3 grid of 2 features; feature 1 is feature 0 doubled, so both must scale alike.
    Matrix grid(6, 2);
    const float values[6] = {1.0f, 2.0f, 4.0f, -1.0f, 0.5f, 3.0f};
    for (int i = 0; i < 6; ++i) grid.row(i) << values[i], 2.0f * values[i];
    CHECK(resize_grid_bicubic(grid, 2, 3, 2, 3) == grid);

    // 1 x 3 -> 1 x 2: source x = 1.5 * (o + 0.5) - 0.5 = 0.25 and 1.75. For s = 0.25 the
    // taps are columns -1, 0, 1, 2 (clamped: 0, 0, 1, 2) with Keys' weights at t = 0.25
    // (A = -0.75): far(1.25) = -0.10546875, near(0.25) = 0.87890625, near(0.75) = 0.26171875,
    // far(1.75) = -0.03515625. PyTorch 1.13 gives [1.15625, 3.58203125] for this row.
    Matrix row(3, 1);
    row << 1.0f, 2.0f, 4.0f;
    const Matrix out = resize_grid_bicubic(row, 1, 3, 1, 2);
    const float first = (-0.10546875f + 0.87890625f) * 1.0f + 0.26171875f * 2.0f + -0.03515625f * 4.0f;
    // s = 1.75: taps 0, 1, 2, 3 -> 0, 1, 2, 2 with t = 0.75: far(1.75), near(0.75), near(0.25), far(1.25).
    const float second = -0.03515625f * 1.0f + 0.26171875f * 2.0f + (0.87890625f - 0.10546875f) * 4.0f;
    CHECK(first == 1.15625f);
    CHECK(second == 3.58203125f);
    CHECK(out(0, 0) == doctest::Approx(first).epsilon(1e-6));
    CHECK(out(1, 0) == doctest::Approx(second).epsilon(1e-6));

    // Weights sum to 1: a constant grid stays constant at any size.
    const Matrix constant = Matrix::Constant(12, 3, 0.7f);
    const Matrix big = resize_grid_bicubic(constant, 3, 4, 7, 5);
    CHECK(big.rows() == 35);
    CHECK((big.array() - 0.7f).abs().maxCoeff() < 1e-6f);
    CHECK_THROWS_AS(resize_grid_bicubic(constant, 3, 3, 2, 2), Error);
    CHECK_THROWS_AS(resize_grid_bicubic(constant, 3, 4, 0, 2), Error);
}

TEST_CASE("resize_grid_bicubic_antialiased: Pillow's filter (A = -0.5) widened when shrinking, hand-computed") {
    // 1 x 4 -> 1 x 2: scale 2, support 4, every source column under each output's window,
    // at (j + 0.5 - centre) / 2 = -0.25, 0.25, 0.75, 1.25 for the first (centre 1) and
    // -1.25 .. 0.25 for the second (centre 3). Keys (A = -0.5): near(0.25) = 0.8671875,
    // near(0.75) = 0.2265625, far(1.25) = -0.0703125; each window's weights sum to 1.890625.
    // PyTorch 1.13 (antialias=True) gives [1.5578513, 5.7066116].
    Matrix row(4, 1);
    row << 1.0f, 2.0f, 4.0f, 8.0f;
    const Matrix shrunk = resize_grid_bicubic_antialiased(row, 1, 4, 1, 2);
    REQUIRE(shrunk.rows() == 2);
    CHECK(shrunk(0, 0) == doctest::Approx(2.9453125 / 1.890625).epsilon(1e-6));
    CHECK(shrunk(1, 0) == doctest::Approx(10.7890625 / 1.890625).epsilon(1e-6));
    // Grown, the filter keeps A = -0.5 (not the plain bicubic's -0.75): 1 x 2 -> 1 x 3 gives
    // PyTorch's [0.86842138, 2, 3.13157916], the window cut at the edge and renormalised.
    Matrix pair(2, 1);
    pair << 1.0f, 3.0f;
    const Matrix grown = resize_grid_bicubic_antialiased(pair, 1, 2, 1, 3);
    CHECK(grown(0, 0) == doctest::Approx(0.86842138).epsilon(1e-6));
    CHECK(grown(1, 0) == doctest::Approx(2.0).epsilon(1e-6));
    CHECK(grown(2, 0) == doctest::Approx(3.13157916).epsilon(1e-6));
    // Both sides at once (the width, then the height): a 2 x 3 grid to 1 x 2 and to 3 x 2, as
    // PyTorch 1.13 gives them; a constant grid stays constant.
    Matrix grid(6, 1);
    grid << 1.0f, 2.0f, 4.0f, -1.0f, 0.5f, 3.0f;
    const Matrix both = resize_grid_bicubic_antialiased(grid, 2, 3, 1, 2);
    CHECK(both(0, 0) == doctest::Approx(0.34711051).epsilon(1e-5));
    CHECK(both(1, 0) == doctest::Approx(2.76284122).epsilon(1e-5));
    const Matrix taller = resize_grid_bicubic_antialiased(grid, 2, 3, 3, 2);
    const float expected[6] = {1.39105082f, 3.41626883f, 0.34711051f, 2.76284122f, -0.69683021f, 2.10941315f};
    for (int i = 0; i < 6; ++i) CHECK(taller(i, 0) == doctest::Approx(expected[i]).epsilon(1e-5));
    const Matrix constant = Matrix::Constant(37 * 37, 2, -0.3f);
    const Matrix small = resize_grid_bicubic_antialiased(constant, 37, 37, 16, 16);
    CHECK(small.rows() == 256);
    CHECK((small.array() + 0.3f).abs().maxCoeff() < 1e-6f);
    CHECK_THROWS_AS(resize_grid_bicubic_antialiased(constant, 37, 36, 16, 16), Error);
}

namespace {

// Tiny hand-made JPEGs for the fuzz regressions below: SOI, a quantisation table, DC and
// AC Huffman tables with one code each (or `dc_table` as given), a 3-component
// progressive frame, its first DC scan (one 0 bit per block: every DC difference 0, for
// up to 8 blocks), EOI.
std::string jpeg_segment(int marker, const std::string& payload) {
    const std::size_t n = payload.size() + 2;
    return std::string{'\xff', static_cast<char>(marker), static_cast<char>(n >> 8), static_cast<char>(n & 255)} +
           payload;
}

std::string tiny_jpeg(int width, int height, std::string dc_table = {}) {
    const std::string one_code = std::string(1, '\1') + std::string(15, '\0') + std::string(1, '\0');
    if (dc_table.empty()) dc_table = one_code;
    std::string frame = {8,
                         static_cast<char>(height >> 8),
                         static_cast<char>(height & 255),
                         static_cast<char>(width >> 8),
                         static_cast<char>(width & 255),
                         3};
    for (char c = 1; c <= 3; ++c) frame += std::string{c, 0x11, 0};
    return std::string("\xff\xd8") + jpeg_segment(0xdb, std::string(1, '\0') + std::string(64, '\1')) +
           jpeg_segment(0xc4, std::string(1, '\x00') + dc_table) +
           jpeg_segment(0xc4, std::string(1, '\x10') + one_code) + jpeg_segment(0xc2, frame) +
           jpeg_segment(0xda, std::string{3, 1, 0, 2, 0, 3, 0, 0, 0, 0}) + std::string(1, '\x03') + "\xff\xd9";
}

std::string decode_bytes_error(const std::string& bytes) {
    try {
        decode_image_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())), "bomb.jpg");
    } catch (const Error& e) {
        return e.what();
    }
    return "decoded";
}

}   // namespace

// Found by tests/fuzz/fuzz_image: a 220-byte progressive JPEG claiming 16384 x 16384
// (within the side limit) made stb_image allocate 3 GB and decode for seconds. Refused
// now by its pixel count, before any pixel is decoded.
TEST_CASE("image decode: a tiny JPEG claiming too many pixels is refused before decoding (fuzz regression)") {
    CHECK(decode_bytes_error(tiny_jpeg(16384, 16384)) ==
          "bomb.jpg: image is 16384x16384 = 268435456 pixels, over the limit of 134217728 (128 megapixels)");
    CHECK(decode_bytes_error(tiny_jpeg(16384, 8193)).find("over the limit of 134217728") != std::string::npos);
    CHECK(decode_bytes_error(tiny_jpeg(16, 8)) == "decoded");   // the same file, small: it decodes
}

// Found by tests/fuzz/fuzz_image with stb_image compiled in (UBSan: index 257 out of
// bounds for 'stbi_uc[257]'): a Huffman table listing more than 256 symbols made
// stb_image 2.27 write past its tables. Refused while the JPEG's segments are walked.
TEST_CASE("image decode: a JPEG Huffman table of more than 256 symbols is refused (fuzz regression)") {
    std::string counts(16, '\0');
    counts[14] = 2;
    counts[15] = '\xff';   // 257 codes
    CHECK(decode_bytes_error(tiny_jpeg(16, 8, counts + std::string(257, '\0'))) ==
          "bomb.jpg: corrupt JPEG file (Huffman table (DHT) of 257 symbols, expected at most 256 within its segment)");
    // A table whose symbols run past its segment, and one cut before its 16 counts.
    CHECK(decode_bytes_error(tiny_jpeg(16, 8, std::string(1, '\3') + std::string(15, '\0') + "\1\2")) ==
          "bomb.jpg: corrupt JPEG file (Huffman table (DHT) of 3 symbols, expected at most 256 within its segment)");
    CHECK(decode_bytes_error(tiny_jpeg(16, 8, std::string(10, '\0'))) ==
          "bomb.jpg: corrupt JPEG file (Huffman table (DHT) cut short)");
}

// Found by tests/fuzz/fuzz_image in CI (2026-11-24): a progressive JPEG whose scans reach
// no valid Huffman code. stb_image 2.27 read its tables at a wild index and the process
// died of SEGV (only sometimes: what it read depended on the heap). JPEG is now decoded
// by libjpeg-turbo, which refuses the file with one line.
TEST_CASE("image decode: a JPEG whose scans reach no Huffman code is refused with one line (fuzz regression)") {
    const std::string file = images_dir() + "/fuzz/stb_huffman_crash.jpg";
    std::string message;
    try {
        decode_image_file(file);
    } catch (const Error& e) {
        message = e.what();
    }
    CHECK(message ==
          file + ": corrupt JPEG file (libjpeg-turbo: Corrupt JPEG data: 2 extraneous bytes before marker 0xc2)");
}

// libjpeg does not convert CMYK (or YCCK) to RGB, so such a JPEG is refused by name rather
// than shown in wrong colours. The file is made by libjpeg-turbo's own encoder.
TEST_CASE("image decode: a CMYK JPEG is refused with one line naming it") {
    const int width = 16, height = 8;
    std::vector<unsigned char> cmyk(static_cast<std::size_t>(width * height * 4));
    for (std::size_t i = 0; i < cmyk.size(); ++i) cmyk[i] = static_cast<unsigned char>(i * 7);
    tjhandle encoder = tjInitCompress();
    REQUIRE(encoder != nullptr);
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    const int failed = tjCompress2(encoder, cmyk.data(), width, 0, height, TJPF_CMYK, &jpeg, &size, TJSAMP_444, 90, 0);
    tjDestroy(encoder);
    REQUIRE(failed == 0);
    const std::string bytes(reinterpret_cast<const char*>(jpeg), size);
    tjFree(jpeg);
    std::string message;
    try {
        decode_image_bytes(as_bytes(bytes), "cmyk.jpg");
    } catch (const Error& e) {
        message = e.what();
    }
    CHECK(message == "cmyk.jpg: CMYK JPEG is not supported; expected a colour (YCbCr or RGB) or greyscale JPEG");
}
