// The demo models through headscope-cli: dump against the PyTorch re-implementation
// (tools/demo_reference.py), the dump/info/models/export-weights contract, render
// pixels, and bad inputs.

#include "cli/cli_runner.h"
#include "core/models/toy/toy_models.h"
#include "core/render/colormap.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>
#include <stb_image.h>

#include <algorithm>
#include <fstream>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string assets = HEADSCOPE_ASSETS_DIR;
const std::string shapes = assets + "/shapes.png";

struct Png {
    int width = 0;
    int height = 0;
    std::vector<unsigned char> rgb;
    Rgba8 at(int x, int y) const {
        const std::size_t i =
            (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
        return {rgb[i], rgb[i + 1], rgb[i + 2], 255};
    }
    long count(Rgba8 c) const {
        long n = 0;
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) n += at(x, y) == c;
        }
        return n;
    }
};

Png load_png(const std::string& path) {
    Png png;
    int channels = 0;
    unsigned char* pixels = stbi_load(path.c_str(), &png.width, &png.height, &channels, 3);
    REQUIRE_MESSAGE(pixels != nullptr, "cannot read " << path);
    png.rgb.assign(pixels, pixels + static_cast<std::size_t>(png.width) * static_cast<std::size_t>(png.height) * 3);
    stbi_image_free(pixels);
    return png;
}

}   // namespace

TEST_CASE("demo models: every layer's attention equals the PyTorch re-implementation within 1e-4" *
          doctest::test_suite("golden")) {
    std::ifstream in(golden_dir() + "/models/cases.json");
    REQUIRE(in.good());
    const auto manifest = nlohmann::json::parse(in);
    TempDir dir;
    int n_cases = 0;
    for (const auto& c : manifest.at("cases")) {
        const std::string name = c.at("name");
        CAPTURE(name);
        const std::string out = dir.file(name + ".safetensors");
        std::vector<std::string> args = {"dump", "--model", c.at("model").get<std::string>()};
        for (const auto& s : c.at("settings")) args.push_back(s);
        std::vector<std::string> input = c.at("input");
        if (input[0] == "--image") input[1] = std::string(HEADSCOPE_SOURCE_DIR) + "/" + input[1];
        args.insert(args.end(), input.begin(), input.end());
        if (!c.at("causal").is_null()) args.insert(args.end(), {"--causal", c.at("causal").get<std::string>()});
        std::string disabled;
        for (const auto& d : c.at("disable_heads"))
            disabled.append(disabled.empty() ? "" : ",").append(d.get<std::string>());
        if (!disabled.empty()) args.insert(args.end(), {"--disable-heads", disabled});
        args.insert(args.end(), {"--out", out});

        const RunResult r = run_cli(args);
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        const auto ours = SafetensorsFile::open(out);
        const auto expected = SafetensorsFile::open(golden_dir() + "/models/" + name + "/expected.safetensors");
        for (const TensorView& t : expected.tensors()) {
            CAPTURE(t.name);
            REQUIRE(ours.contains(t.name));
            CHECK(ours.get(t.name).shape == t.shape);
            const auto a = floats(ours, t.name);
            const auto b = t.to_floats();
            REQUIRE(a.size() == b.size());
            const double diff = max_abs_diff(a.data(), b.data(), a.size());
            CHECK_MESSAGE(diff <= 1e-4,
                          name << " " << t.name << ": max |diff| = " << diff
                               << " (if the demo weights changed on purpose, rerun tools/demo_reference.py)");
        }
        ++n_cases;
    }
    CHECK(n_cases == 7);
}

TEST_CASE("dump: the CLI.md layout, with tokens metadata and input ids") {
    TempDir dir;
    const std::string out = dir.file("d.safetensors");
    const RunResult r = run_cli({"dump", "--model", "builtin:toy-text", "--text", "Hello, wörld 猫", "--out", out});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    const auto f = SafetensorsFile::open(out);
    CHECK(f.get("attn.0").shape == Shape{4, 4, 4});
    CHECK(f.get("attn.1").shape == Shape{4, 4, 4});
    CHECK_FALSE(f.contains("attn.2"));
    CHECK_FALSE(f.contains("logits"));   // the demo models have no head
    const auto tokens = nlohmann::json::parse(f.metadata().at("tokens")).get<std::vector<std::string>>();
    CHECK(tokens == std::vector<std::string>{"Hello", ",", "wörld", "猫"});
    // input_ids: FNV-1a of each token's bytes (top bit cleared), as the model documents.
    const TensorView& ids = f.get("input_ids");
    CHECK(ids.dtype == DType::I64);
    CHECK(ids.to_floats()[2] == static_cast<float>(toy_text_token_id("wörld")));

    // --tokens with those ids gives the same maps, and input_ids equal to the ids given.
    std::string list;
    std::vector<std::int64_t> id_values(4);
    std::memcpy(id_values.data(), ids.bytes.data(), 32);
    for (auto id : id_values) list.append(list.empty() ? "" : ",").append(std::to_string(id));
    const std::string out2 = dir.file("t.safetensors");
    REQUIRE(run_cli({"dump", "--model", "builtin:toy-text", "--tokens", list, "--out", out2}).exit_code == 0);
    const auto g = SafetensorsFile::open(out2);
    CHECK(floats(g, "attn.1") == floats(f, "attn.1"));
    CHECK(g.get("input_ids").to_floats() == ids.to_floats());

    // Images: [CLS] + one label per patch, no input_ids.
    const std::string out3 = dir.file("v.safetensors");
    REQUIRE(run_cli({"dump", "--model", "builtin:toy-vit", "--image", shapes, "--out", out3}).exit_code == 0);
    const auto v = SafetensorsFile::open(out3);
    CHECK(v.get("attn.0").shape == Shape{4, 197, 197});
    CHECK_FALSE(v.contains("input_ids"));
    const auto labels = nlohmann::json::parse(v.metadata().at("tokens")).get<std::vector<std::string>>();
    REQUIRE(labels.size() == 197);
    CHECK(labels[0] == "[CLS]");
    CHECK(labels[196] == "p195");
}

TEST_CASE("dump --only-layers / --only-heads: those maps alone, in the order given, equal to the whole dump's") {
    TempDir dir;
    const std::vector<std::string> base = {"dump", "--model", "builtin:toy-text",       "--layers", "3", "--heads",
                                           "4",    "--text",  "one two three four five"};
    const auto dump = [&](std::initializer_list<std::string> extra, const std::string& out) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra);
        a.insert(a.end(), {"--out", out});
        return run_cli(a);
    };
    const std::string whole = dir.file("whole.safetensors");
    const std::string some = dir.file("some.safetensors");
    REQUIRE(dump({}, whole).exit_code == 0);
    const RunResult r = dump({"--only-layers", "2,0", "--only-heads", "3,1"}, some);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("2 layers x 2 heads") != std::string::npos);
    const auto f = SafetensorsFile::open(whole);
    const auto g = SafetensorsFile::open(some);
    CHECK_FALSE(g.contains("attn.1"));
    CHECK(nlohmann::json::parse(g.metadata().at("layers")) == nlohmann::json({2, 0}));
    CHECK(nlohmann::json::parse(g.metadata().at("heads")) == nlohmann::json({3, 1}));
    CHECK_FALSE(f.metadata().count("layers"));
    CHECK(g.get("input_ids").to_floats() == f.get("input_ids").to_floats());
    const std::size_t T = 5;
    for (const int layer : {2, 0}) {
        const std::string name = "attn." + std::to_string(layer);
        REQUIRE(g.get(name).shape == Shape{2, 5, 5});
        const std::vector<float> all = floats(f, name);
        const std::vector<float> chosen = floats(g, name);
        // Head 3 first, then head 1.
        CHECK(std::equal(chosen.begin(), chosen.begin() + T * T, all.begin() + 3 * T * T));
        CHECK(std::equal(chosen.begin() + T * T, chosen.end(), all.begin() + 1 * T * T));
    }
    // Bad lists: one line naming the flag, nothing written.
    const std::string none = dir.file("none.safetensors");
    check_bad_input(dump({"--only-layers", "3"}, none), "--only-layers: layer 3 is outside 0..2");
    check_bad_input(dump({"--only-heads", "1,1"}, none), "--only-heads: head 1 is listed twice");
    check_bad_input(dump({"--only-heads", "x"}, none), "--only-heads");
    CHECK_FALSE(std::filesystem::exists(none));
}

TEST_CASE("dump: --causal and --disable-heads change what they should") {
    TempDir dir;
    const std::vector<std::string> base = {"dump", "--model", "builtin:toy-text", "--text", "a b c d e f"};
    auto with = [&](std::initializer_list<std::string> extra, const std::string& out) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra);
        a.insert(a.end(), {"--out", out});
        REQUIRE(run_cli(a).exit_code == 0);
        return SafetensorsFile::open(out);
    };
    const auto plain = with({}, dir.file("p.safetensors"));
    const auto causal = with({"--causal", "on"}, dir.file("c.safetensors"));
    const auto ablated = with({"--disable-heads", "0.1"}, dir.file("a.safetensors"));
    const auto w = floats(causal, "attn.0");   // [4, 6, 6]
    for (int h = 0; h < 4; ++h) {
        for (int i = 0; i < 6; ++i) {
            for (int j = i + 1; j < 6; ++j) CHECK(w[static_cast<std::size_t>((h * 6 + i) * 6 + j)] == 0.0f);
        }
    }
    CHECK(causal.metadata().at("causal") == "on");
    // Ablating head 0.1 leaves layer 0's maps alone and changes layer 1's.
    CHECK(floats(ablated, "attn.0") == floats(plain, "attn.0"));
    CHECK(floats(ablated, "attn.1") != floats(plain, "attn.1"));
}

TEST_CASE("models, info and export-weights") {
    const RunResult models = run_cli({"models"});
    REQUIRE(models.exit_code == 0);
    CHECK(models.out.find("builtin:toy-text") != std::string::npos);
    CHECK(models.out.find("builtin:toy-vit") != std::string::npos);
    CHECK(models.out.find("builtin:tiny-shapes  ViT trained here") != std::string::npos);
    // The trained model opens by name from assets/models/ and says so.
    const RunResult shapes = run_cli({"info", "--model", "builtin:tiny-shapes"});
    REQUIRE(shapes.exit_code == 0);
    CHECK(shapes.out.rfind("builtin:tiny-shapes: ViT trained here", 0) == 0);
    CHECK(shapes.out.find("heads: learned; `headscope-cli analyze` measures what each does on an input\n") !=
          std::string::npos);
    const auto story_at = models.out.find("builtin:tiny-story ");
    REQUIRE(story_at != std::string::npos);
    const std::string story_line = models.out.substr(story_at, models.out.find('\n', story_at) - story_at);
    CHECK(story_line.find(" GPT-2 trained here on the King James Bible") != std::string::npos);
    const RunResult story = run_cli({"info", "--model", "builtin:tiny-story"});
    REQUIRE(story.exit_code == 0);
    CHECK(story.out.rfind("builtin:tiny-story: GPT-2 trained here", 0) == 0);
    CHECK(story.out.find("layers L = 2, heads H = 4, width E = 128") != std::string::npos);

    const RunResult info = run_cli({"info", "--model", "builtin:toy-text"});
    REQUIRE(info.exit_code == 0);
    CHECK(info.out.find("layers L = 2, heads H = 4, width E = 64") != std::string::npos);
    CHECK(info.out.find("0.0  previous token") != std::string::npos);
    const RunResult random = run_cli({"info", "--model", "builtin:toy-vit", "--init", "random", "--layers", "3"});
    REQUIRE(random.exit_code == 0);
    CHECK(random.out.find("2.3  (random weights") != std::string::npos);

    TempDir dir;
    const std::string out = dir.file("w.safetensors");
    REQUIRE(run_cli({"export-weights", "--model", "builtin:toy-vit", "--patch", "8", "--out", out}).exit_code == 0);
    const auto w = SafetensorsFile::open(out);
    CHECK(w.get("embeddings.patch.weight").shape == Shape{64, 3, 8, 8});
    CHECK(w.get("embeddings.position").shape == Shape{785, 64});
    CHECK(w.get("layers.1.attn.q_proj.weight").shape == Shape{64, 64});
    CHECK(nlohmann::json::parse(w.metadata().at("settings")).at("patch_size") == "8");
}

TEST_CASE("render: pixels show the weights, masked cells and the colour map") {
    TempDir dir;
    // Head 0.0 of toy-text is a previous-token head: the cell left of the diagonal is
    // the brightest of each row; with --causal on, the upper triangle is masked grey.
    const std::string png = dir.file("m.png");
    REQUIRE(run_cli({"render", "--model", "builtin:toy-text", "--text", "one two three four five six", "--layer", "0",
                     "--head", "0", "--causal", "on", "--out", png})
                .exit_code == 0);
    const Png image = load_png(png);
    CHECK(image.count(masked_colour) > 15 * 20 * 20);   // 15 masked cells, each 20+ px square, plus the legend swatch
    // Pixels that read as a weight >= 0.85 on viridis (the nearest of 256 colour-map steps,
    // within a few levels): the five previous-token cells (~0.9) and [CLS]-less row 0 (1.0).
    long near_top = 0;
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
            const Rgba8 c = image.at(x, y);
            int best = 0;
            int best_distance = 1 << 30;
            for (int k = 0; k < 256; ++k) {
                const Rgba8 m = colormap_lookup(Colormap::viridis, static_cast<float>(k) / 255.0f);
                const int d = std::abs(c.r - m.r) + std::abs(c.g - m.g) + std::abs(c.b - m.b);
                if (d < best_distance) {
                    best_distance = d;
                    best = k;
                }
            }
            near_top += best_distance <= 6 && best >= 217;
        }
    }
    CHECK(near_top > 6 * 20 * 20);   // six bright cells of 24 px (and the colour bar's top)

    // The grid and the overlay render for an image model; overlay refuses text models.
    const std::string grid = dir.file("g.png");
    REQUIRE(run_cli({"render", "--model", "builtin:toy-vit", "--image", shapes, "--view", "grid", "--out", grid})
                .exit_code == 0);
    CHECK(load_png(grid).width > 400);
    const std::string overlay = dir.file("o.png");
    REQUIRE(run_cli({"render", "--model", "builtin:toy-vit", "--image", shapes, "--view", "overlay", "--layer", "0",
                     "--head", "3", "--out", overlay})
                .exit_code == 0);
    CHECK(load_png(overlay).height >= 448);
    check_bad_input(run_cli({"render", "--model", "builtin:toy-text", "--text", "a b", "--view", "overlay", "--out",
                             dir.file("x.png")}),
                    "takes text");
    // render writes PNG: another extension is refused before any work, and nothing is written.
    const std::string jpeg = dir.file("m.jpg");
    check_bad_input(run_cli({"render", "--model", "builtin:toy-text", "--text", "a b", "--out", jpeg}),
                    "--out " + jpeg + ": render writes PNG; expected a file name ending in .png");
    CHECK_FALSE(std::filesystem::exists(jpeg));
    // A short input's picture is wide enough for its whole title.
    const std::string short_input = dir.file("short.PNG");
    REQUIRE(run_cli({"render", "--model", "builtin:toy-text", "--text", "a", "--layer", "0", "--head", "1", "--out",
                     short_input})
                .exit_code == 0);
    // (The title's band, rows 4..20, is background in its last 8 columns: the text ended before them.)
    const auto picture = load_png(short_input);
    int ink_at_right = 0;
    for (int y = 4; y < 20; ++y) {
        for (int x = picture.width - 8; x < picture.width; ++x) ink_at_right += picture.at(x, y) != picture.at(0, 0);
    }
    CHECK(ink_at_right == 0);
}

TEST_CASE("render: NaN in a checkpoint's weights is a warning, and the map shows the cells as not finite") {
    TempDir dir;
    // tests/errors/gpt2_nan: gpt2_tiny with one NaN in layer 0's c_attn (tools/make_error_fixtures.py).
    const std::string nan_png = dir.file("nan.png");
    const RunResult r = run_cli({"render", "--model", std::string(HEADSCOPE_SOURCE_DIR) + "/tests/errors/gpt2_nan",
                                 "--text", "one two three", "--layer", "1", "--head", "0", "--out", nan_png});
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("warning: ") != std::string::npos);
    CHECK(r.err.find("'transformer.h.0.attn.c_attn.weight' holds 1 non-finite value") != std::string::npos);
    CHECK(count_lines(r.err) == 1);
    const Png nan_map = load_png(nan_png);
    // Every cell reached by the NaN (here all of them: it enters every query) plus the
    // legend's swatch; the same map from the clean checkpoint has none, and no swatch.
    CHECK(nan_map.count(not_finite_colour) > 3 * 24 * 24);
    const std::string clean_png = dir.file("clean.png");
    const RunResult clean =
        run_cli({"render", "--model", std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/gpt2_tiny", "--text",
                 "one two three", "--layer", "1", "--head", "0", "--out", clean_png});
    CHECK(clean.exit_code == 0);
    CHECK(clean.err.empty());
    CHECK(load_png(clean_png).count(not_finite_colour) == 0);
}

TEST_CASE("dump --text-file: the file's sentence, its final line end dropped, as --text gives it") {
    TempDir dir;
    const std::string file = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/errors/sentence.txt";   // ends in "\n"
    std::string sentence = read_bytes(file);
    REQUIRE(sentence.ends_with("\n"));
    sentence.pop_back();
    for (const std::string& model :
         {std::string("builtin:toy-text"), std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/gpt2_tiny"}) {
        CAPTURE(model);
        REQUIRE(
            run_cli({"dump", "--model", model, "--text-file", file, "--out", dir.file("a.safetensors")}).exit_code ==
            0);
        REQUIRE(run_cli({"dump", "--model", model, "--text", sentence, "--out", dir.file("b.safetensors")}).exit_code ==
                0);
        CHECK(read_bytes(dir.file("a.safetensors")) == read_bytes(dir.file("b.safetensors")));
    }
}

TEST_CASE("model commands: bad inputs are one line, exit 2, no output") {
    TempDir dir;
    const std::string out = dir.file("o.safetensors");
    const auto dump = [&](std::initializer_list<std::string> extra) {
        std::vector<std::string> a = {"dump", "--out", out};
        a.insert(a.end(), extra);
        return run_cli(a);
    };
    check_bad_input(dump({"--model", "builtin:toy-text", "--text", ""}), "the sentence is empty");
    check_bad_input(dump({"--model", "builtin:toy-text", "--text", " \n\t "}), "the sentence is empty");
    check_bad_input(dump({"--model", "builtin:toy-text", "--text", "ok \xff"}), "invalid UTF-8 at byte 3");
    check_bad_input(dump({"--model", "builtin:toy-text", "--max-tokens", "3", "--text", "a b c d"}),
                    "4 tokens, more than builtin:toy-text's limit of 3");
    check_bad_input(dump({"--model", "builtin:toy-text", "--image", shapes}), "takes text, not images");
    check_bad_input(dump({"--model", "builtin:toy-vit", "--text", "hi"}), "takes images, not text");
    check_bad_input(dump({"--model", "builtin:toy-text"}), "no input");
    check_bad_input(dump({"--model", "builtin:toy-text", "--text", "a", "--tokens", "1"}), "excludes");
    check_bad_input(dump({"--model", "builtin:toy-text", "--tokens", "1,-2"}), "'-2' is not");
    check_bad_input(dump({"--model", "builtin:toy-text", "--tokens", "2147483648"}), "outside 0..2147483647");
    check_bad_input(dump({"--model", "builtin:nope", "--text", "a"}), "no such built-in model");
    check_bad_input(dump({"--model", "/no/such/folder", "--text", "a"}), "not a built-in model");
    check_bad_input(dump({"--model", "builtin:toy-text", "--heads", "5", "--text", "a"}), "not divisible by H = 5");
    check_bad_input(dump({"--model", "builtin:toy-vit", "--patch", "15", "--image", shapes}),
                    "not a multiple of P = 15");
    check_bad_input(dump({"--model", "builtin:toy-text", "--text", "a", "--disable-heads", "2.0"}),
                    "2.0 does not exist");
    check_bad_input(dump({"--model", "builtin:toy-text", "--text", "a", "--causal", "maybe"}), "--causal");
    check_bad_input(dump({"--model", "builtin:toy-vit", "--image", dir.file("none.png")}), "none.png");
    test::write_bytes(dir.file("bad.png"), "\x89PNG\r\n\x1a\n not really");
    check_bad_input(dump({"--model", "builtin:toy-vit", "--image", dir.file("bad.png")}), "bad.png");
    CHECK_FALSE(std::filesystem::exists(out));
}
