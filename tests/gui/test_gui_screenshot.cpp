// The desktop app under xvfb-run: each view renders once its result is ready, and the
// pixels show what the controls did (causal mask, ablation, the picture), including
// through real keyboard events sent by xdotool.

#include "core/analysis/head_metrics.h"
#include "core/models/model_registry.h"
#include "core/render/colormap.h"
#include "test_support.h"

#include <stb_image.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

using headscope::test::TempDir;

namespace {

struct Screenshot {
    int exit_code = -1;
    std::string err;
    int width = 0;
    int height = 0;
    std::vector<unsigned char> rgb;

    long count(headscope::Rgba8 c) const {
        long n = 0;
        for (std::size_t i = 0; i + 2 < rgb.size(); i += 3)
            n += rgb[i] == c.r && rgb[i + 1] == c.g && rgb[i + 2] == c.b;
        return n;
    }
    template <typename Predicate>
    long count_if(Predicate p) const {
        long n = 0;
        for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) n += p(rgb[i], rgb[i + 1], rgb[i + 2]);
        return n;
    }
    // Differing bytes, leaving out the status bar (its timings change from run to run),
    // and the columns left of `from_x` (the controls, to compare the views alone).
    long differing(const Screenshot& other, int from_x = 0) const {
        if (other.rgb.size() != rgb.size()) return static_cast<long>(rgb.size());
        const std::size_t status_bar = 32 * static_cast<std::size_t>(width) * 3;
        const std::size_t end = rgb.size() > status_bar ? rgb.size() - status_bar : 0;
        const std::size_t row = static_cast<std::size_t>(width) * 3;
        long n = 0;
        for (std::size_t i = 0; i < end; ++i)
            n += i % row >= static_cast<std::size_t>(from_x) * 3 && rgb[i] != other.rgb[i];
        return n;
    }
};

Screenshot load(const std::string& png, int exit_code, const std::string& err_file) {
    Screenshot shot;
    shot.exit_code = exit_code;
    shot.err = headscope::test::read_bytes(err_file);
    int channels = 0;
    if (unsigned char* pixels = stbi_load(png.c_str(), &shot.width, &shot.height, &channels, 3)) {
        shot.rgb.assign(pixels,
                        pixels + static_cast<std::size_t>(shot.width) * static_cast<std::size_t>(shot.height) * 3);
        stbi_image_free(pixels);
    }
    return shot;
}

// Runs the app once; its recent-models list goes to `config` (XDG_CONFIG_HOME), never
// to the user's own.
// As a user launches it: no --model / --text added.
Screenshot take_screenshot_as_launched(const std::string& args, const TempDir& config) {
    TempDir dir;
    const std::string png = dir.file("shot.png");
    const std::string command = "XDG_CONFIG_HOME='" + config.path().string() + "' " +
                                headscope::test::xvfb_run_prefix(dir) + "'" HEADSCOPE_GUI "' --screenshot '" + png +
                                "' " + args + " 2>'" + dir.file("err") + "' </dev/null";
    return load(png, headscope::test::run_command(command, dir.file("err")), dir.file("err"));
}

Screenshot take_screenshot(const std::string& args, const TempDir& config) {
    // These tests were written on the built demo model and its sentence (its heads are
    // known by construction); a launch without --model opens the trained text model on
    // assets/default_sentence.txt, tested on its own below.
    std::string model;
    if (args.find("--model") == std::string::npos) {
        model = "--model builtin:toy-text ";
        if (args.find("--text") == std::string::npos)
            model += "--text 'The cat sat on the mat because the cat was tired .' ";
    }
    return take_screenshot_as_launched(model + args, config);
}

Screenshot take_screenshot(const std::string& args) {
    const TempDir config;
    return take_screenshot(args, config);
}

// Drives a window with real input (XTEST, through the X server, as a keyboard and mouse
// would): runs `before` (a shell command, or nothing), then `launch` (the command that
// starts the window), and 3 s after the window appears, once its first result is on
// screen, the xdotool `actions` ($w names the window); then waits for the window to
// exit. Bounded waits: a window that never appears fails the test, never hangs it.
// Returns the exit code of it all. In the sanitizer build, LeakSanitizer's own tracer now and
// then fails at a window's exit (an abort that is not the program's: see run_command in
// test_support.h); the window's stderr goes to a file of `dir`, and when one says so the
// whole drive is made again without the leak check at exit, ASan and UBSan still on.
int drive_window(const TempDir& dir, const std::string& before, const std::string& launch, const std::string& actions) {
    const std::string script =
        (before.empty() ? "" : before + "; ") + launch + " & pid=\\$!; " +
        "w=\\$(timeout 60 xdotool search --sync --name '^Headscope' | head -n 1); [ -n \\\"\\$w\\\" ] || exit 3; "
        "sleep 3; timeout 30 xdotool windowfocus --sync \\$w; " +
        actions + " wait \\$pid";
    const std::string command = "XDG_CONFIG_HOME='" + dir.path().string() + "' " +
                                headscope::test::xvfb_run_prefix(dir) + "bash -c \"" + script + "\" </dev/null";
    const int exit_code = headscope::test::exit_code_of(std::system(command.c_str()));
    const auto tracer_failed = [&] {
        for (const auto& file : std::filesystem::directory_iterator(dir.path())) {
            if (file.is_regular_file() &&
                headscope::test::read_bytes(file.path().string()).find("LeakSanitizer has encountered a fatal error") !=
                    std::string::npos) {
                return true;
            }
        }
        return false;
    };
    if (exit_code == 0 || !tracer_failed()) return exit_code;
    MESSAGE("LeakSanitizer's own tracer failed at exit; driving again without the leak check at exit");
    const char* options = std::getenv("ASAN_OPTIONS");
    const std::string without_leaks = "ASAN_OPTIONS='" + std::string(options != nullptr ? options : "") +
                                      (options != nullptr && *options != '\0' ? ":" : "") +
                                      "detect_leaks=0'; export ASAN_OPTIONS; " + command;
    return headscope::test::exit_code_of(std::system(without_leaks.c_str()));
}

// xdotool holding `keys` down together for 0.15 s (under ImGui's 0.275 s repeat delay):
// Dear ImGui 1.86 reads key state per frame, so a press and release within one slow
// frame would go unseen. E.g. held("ctrl shift z").
std::string held(const std::string& keys) {
    std::vector<std::string> names;
    for (std::size_t at = 0; at < keys.size();) {
        const std::size_t end = std::min(keys.find(' ', at), keys.size());
        names.push_back(keys.substr(at, end - at));
        at = end + 1;
    }
    std::string down = "xdotool";
    std::string up = "xdotool";
    for (const std::string& name : names) down += " keydown " + name;
    for (auto it = names.rbegin(); it != names.rend(); ++it) up += " keyup " + *it;
    return down + "; sleep 0.15; " + up + "; ";
}

// The predictions panel's bar tracks (app_window.cpp): the run on screen, and the
// intact model beside it when heads are disabled.
constexpr headscope::Rgba8 prediction_track{70, 52, 30, 255};
constexpr headscope::Rgba8 intact_track{28, 58, 76, 255};
constexpr headscope::Rgba8 intact_bar{86, 180, 233, 255};

}   // namespace

TEST_CASE("gui: the default sentence renders heatmaps, and the causal mask shows as masked cells") {
    const Screenshot open = take_screenshot("");
    INFO("stderr: " << open.err);
    REQUIRE(open.exit_code == 0);
    CHECK(open.width == 1280);
    CHECK(open.height == 800);
    // Most weights of the structured heads are ~0: the colour map's bottom fills most cells.
    CHECK(open.count(headscope::colormap_lookup(headscope::Colormap::viridis, 0.0f)) > 60 * 30 * 30);
    const long masked_open = open.count(headscope::masked_colour);

    const Screenshot causal = take_screenshot("--causal --head 1");
    REQUIRE(causal.exit_code == 0);
    // 12 words: 66 of the 144 cells are above the diagonal, each 30+ px square.
    CHECK(causal.count(headscope::masked_colour) > masked_open + 66 * 30 * 30);
}

TEST_CASE("gui: a first launch opens the trained text model on its default sentence, at its most nameable head") {
    // The head the app should land on, measured here with the engine on
    // assets/default_sentence.txt (core/analysis/head_roles.h): the strongest induction head if one
    // is named (>= 0.4), else the strongest previous-token head (>= 0.5).
    std::ifstream in(HEADSCOPE_ASSETS_DIR "/default_sentence.txt");
    std::string sentence;
    REQUIRE(std::getline(in, sentence));
    const auto model = headscope::open_model("builtin:tiny-story", headscope::ToyConfig{});
    const headscope::ModelInput input = model->encode_text(sentence);
    const auto metrics = headscope::compute_model_metrics(model->forward(input, headscope::RunOptions{}),
                                                          headscope::metric_context(input, model->info()));
    const auto induction = std::max_element(metrics.begin(), metrics.end(), [](const auto& a, const auto& b) {
        return a.induction.value_or(0.0) < b.induction.value_or(0.0);
    });
    const auto previous = std::max_element(metrics.begin(), metrics.end(),
                                           [](const auto& a, const auto& b) { return a.prev_token < b.prev_token; });
    const auto& expected = induction->induction.value_or(0.0) >= 0.4 ? *induction : *previous;
    CHECK((expected.induction.value_or(0.0) >= 0.4 || expected.prev_token >= 0.8));   // a learned, named head
    const std::string at = "--layer " + std::to_string(expected.layer) + " --head " + std::to_string(expected.head);
    CAPTURE(at);

    const TempDir config;
    const Screenshot launched = take_screenshot_as_launched("", config);
    INFO("stderr: " << launched.err);
    REQUIRE(launched.exit_code == 0);
    CHECK(launched.err.empty());
    const Screenshot chosen = take_screenshot_as_launched("--model builtin:tiny-story " + at, config);
    REQUIRE(chosen.exit_code == 0);
    CHECK(launched.differing(chosen) == 0);
    const Screenshot other =
        take_screenshot_as_launched(expected.head == 0 ? "--layer 0 --head 1" : "--layer 0 --head 0", config);
    REQUIRE(other.exit_code == 0);
    CHECK(launched.differing(other) > 1000);
}

TEST_CASE("gui: disabling a head changes the next layer's map, not its own layer's") {
    const Screenshot base = take_screenshot("--layer 1 --head 0");
    const Screenshot ablated = take_screenshot("--layer 1 --head 0 --disable 0.0,0.1");
    REQUIRE(base.exit_code == 0);
    REQUIRE(ablated.exit_code == 0);
    CHECK(ablated.differing(base) > 3000);
    const Screenshot same_layer = take_screenshot("--layer 0 --head 0");
    const Screenshot same_layer_ablated = take_screenshot("--layer 0 --head 0 --disable 1.0");
    // Layer 1 is not on screen: the views are the same; only the controls differ (the
    // head's disable box, and the list of disabled heads).
    CHECK(same_layer_ablated.differing(same_layer, 360) == 0);
    CHECK(same_layer_ablated.differing(same_layer) > 0);
}

TEST_CASE("gui: every view renders, and the image view shows the picture under the map") {
    const Screenshot matrix = take_screenshot("--view matrix");
    for (const char* view : {"tokens", "model", "compare", "stages"}) {
        CAPTURE(view);
        const Screenshot shot = take_screenshot(std::string("--view ") + view);
        INFO("stderr: " << shot.err);
        CHECK(shot.exit_code == 0);
        CHECK(shot.differing(matrix) > 10000);
    }
    const Screenshot image =
        take_screenshot("--model builtin:toy-vit --view image --image '" HEADSCOPE_ASSETS_DIR "/shapes.png'");
    INFO("stderr: " << image.err);
    REQUIRE(image.exit_code == 0);
    // The red house and ball of assets/shapes.png, seen through the heat layer: orange
    // there (about (170, 135, 40)), a colour neither viridis nor the window's grey has.
    const auto reddish = [](int r, int g, int b) { return r > g + 30 && r > b + 60; };
    CHECK(image.count_if(reddish) > 5000);
    const Screenshot text_model = take_screenshot("--view image");
    CHECK(text_model.count_if(reddish) < 500);
}

TEST_CASE("gui: bad and hard inputs: reported, not shown as data, no crash, no hang") {
    const Screenshot empty = take_screenshot("--text ''");
    CHECK(empty.exit_code == 2);
    CHECK(empty.err.find("empty") != std::string::npos);
    CHECK(empty.width == 1280);   // the window still rendered, with the message in it
    TempDir dir;
    headscope::test::write_bytes(dir.file("notes.png"), "this is not an image");
    const Screenshot bad = take_screenshot("--model builtin:toy-vit --image '" + dir.file("notes.png") + "'");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("notes.png") != std::string::npos);
    // A 2,000+ character paste: 330 words, all shown.
    std::string long_text;
    for (int i = 0; i < 330; ++i) long_text += "word" + std::to_string(i % 50) + " ";
    const Screenshot long_shot = take_screenshot("--text '" + long_text + "'");
    CHECK(long_shot.exit_code == 0);
    CHECK(long_shot.err.empty());
    // A 10000 x 10000 image (an RLE TGA: 3 MB on disk, 300 MB of pixels): decoded and
    // resized on the worker, shown without a crash or a hang.
    {
        const std::string huge = dir.file("huge.tga");
        std::string bytes(18, '\0');
        bytes[2] = 10;   // run-length encoded true-colour
        const auto put16 = [&](std::size_t at, int v) {
            bytes[at] = static_cast<char>(v & 0xff);
            bytes[at + 1] = static_cast<char>(v >> 8);
        };
        put16(12, 10000);
        put16(14, 10000);
        bytes[16] = 24;     // bits per pixel
        bytes[17] = 0x20;   // top-left origin
        const std::string packet = {static_cast<char>(0x80 | 127), static_cast<char>(200), static_cast<char>(120),
                                    static_cast<char>(60)};   // 128 pixels of one colour
        bytes.reserve(bytes.size() + 10000ull * 10000ull / 128 * 4);
        for (long i = 0; i < 10000L * 10000L / 128; ++i) bytes += packet;
        headscope::test::write_bytes(huge, bytes);
        const Screenshot big = take_screenshot("--model builtin:toy-vit --view image --image '" + huge + "'");
        INFO("stderr: " << big.err);
        CHECK(big.exit_code == 0);
        CHECK(big.width == 1280);
    }
    const Screenshot missing = take_screenshot("--model builtin:toy-vit --image /no/such/file.png");
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("/no/such/file.png") != std::string::npos);
}

TEST_CASE("gui: real key presses (xdotool): right arrow selects the next head, C toggles the causal mask") {
    TempDir dir;
    const std::string before = dir.file("before.png");
    const std::string after = dir.file("after.png");
    const std::string err = dir.file("err");
    // Both windows run interactively for 8 s; the second gets real key presses once its
    // first result is on screen (keys need a model to act on).
    const std::string run =
        std::string("'" HEADSCOPE_GUI "' --model builtin:toy-text --text 'The cat sat on the mat because "
                    "the cat was tired .' --size 1280x800 --screenshot-after 8 --screenshot ");
    REQUIRE(drive_window(dir, run + "'" + before + "' 2>>'" + err + "'", run + "'" + after + "' 2>>'" + err + "'",
                         "xdotool mousemove --window \\$w 700 400; " + held("Right") + held("c")) == 0);
    const Screenshot a = load(before, 0, err);
    const Screenshot b = load(after, 0, err);
    INFO("stderr: " << b.err);
    REQUIRE(a.width == 1280);
    REQUIRE(b.width == 1280);
    CHECK(b.count(headscope::masked_colour) > a.count(headscope::masked_colour) + 66 * 30 * 30);
    CHECK(b.differing(a) > 20000);   // and head 0.1 (same token) replaced head 0.0 (previous token)
}

TEST_CASE("gui: key taps shorter than a frame still count (xdotool keydown and keyup at once)") {
    TempDir dir;
    const std::string after = dir.file("after.png");
    const std::string err = dir.file("err");
    // Taps with no time between down and up: both reach the window in one batch of events,
    // and a key state read once a frame never sees the key down.
    const std::string flags = "--model builtin:toy-text --text 'The cat sat on the mat because the cat was tired .' "
                              "--layer 0 --size 1280x800";
    REQUIRE(
        drive_window(dir, "",
                     "'" HEADSCOPE_GUI "' " + flags + " --head 0 --screenshot-after 8 --screenshot '" + after +
                         "' 2>>'" + err + "'",
                     "xdotool mousemove --window \\$w 1270 790; sleep 0.5; for k in Right Right c; do xdotool keydown "
                     "--delay 0 \\$k keyup --delay 0 \\$k; sleep 0.4; done; ") == 0);
    const Screenshot tapped = load(after, 0, err);
    const Screenshot direct = take_screenshot(flags + " --head 2 --causal", dir);
    INFO("stderr: " << tapped.err);
    REQUIRE(tapped.width == 1280);
    CHECK(tapped.differing(direct) == 0);   // two heads on and the causal mask: every tap taken
}

TEST_CASE(
    "gui: the mouse wheel zooms the Matrix view's map about the pointer (xdotool), and the title names the model") {
    TempDir dir;
    const std::string title = dir.file("title");
    const std::string before = dir.file("before.png");
    const std::string after = dir.file("after.png");
    const std::string err = dir.file("err");
    // 180 tokens: cells of about 3 px. Six wheel notches over the lower left of the map,
    // below the causal diagonal, zoom 1.25^6 = 3.8x about that point: the view then holds
    // no masked cell at all, where the whole map is half masked.
    std::string sentence;
    for (int i = 0; i < 30; ++i) sentence += "the cat sat on the mat ";
    const std::string run =
        std::string("'" HEADSCOPE_GUI "' --model builtin:toy-text --causal --view matrix --text '") + sentence +
        "' --size 1280x800 --screenshot-after 8 --screenshot ";
    REQUIRE(drive_window(dir, run + "'" + before + "' 2>>'" + err + "'", run + "'" + after + "' 2>>'" + err + "'",
                         "xdotool getwindowname \\$w > '" + title +
                             "'; xdotool mousemove --window \\$w 480 560; sleep 0.3; "
                             "for i in 1 2 3 4 5 6; do xdotool click 4; sleep 0.2; done; "
                             "xdotool mousemove --window \\$w 1270 790;") == 0);
    const Screenshot a = load(before, 0, err);
    const Screenshot b = load(after, 0, err);
    INFO("stderr: " << b.err);
    REQUIRE(a.width == 1280);
    REQUIRE(b.width == 1280);
    CHECK(a.count(headscope::masked_colour) > 60000);                                    // half of a ~500 px map
    CHECK(b.count(headscope::masked_colour) < a.count(headscope::masked_colour) / 20);   // the legend's swatch
    std::ifstream named(title);
    std::string name;
    std::getline(named, name);
    CHECK(name.rfind("Headscope \u2014 builtin:toy-text \u2014 the cat sat on the mat the cat", 0) == 0);
    CHECK(name.size() < 90);   // the 690 characters of input cut short
}

TEST_CASE("gui: Ctrl+Z switches a head back on, Ctrl+Shift+Z off again, and the disabled list names it (xdotool)") {
    TempDir dir;
    const std::string err = dir.file("err");
    // Three windows on the same input, each for 8 s: left alone; head 0.0's "disable" box
    // clicked, then Ctrl+Z; the same, then Ctrl+Shift+Z.
    const auto shot = [&](const std::string& name, const std::string& actions) {
        const std::string png = dir.file(name);
        const std::string run = std::string("'" HEADSCOPE_GUI "' --model builtin:toy-text --text 'The cat sat on the "
                                            "mat .' --size 1280x800 --screenshot-after 8 --screenshot '") +
                                png + "' 2>>'" + err + "'";
        // The pointer ends over the status bar in each, so that no tooltip differs.
        REQUIRE(drive_window(dir, "", run, actions + "xdotool mousemove --window \\$w 1270 790; sleep 0.5;") == 0);
        return load(png, 0, err);
    };
    const std::string ctrl_z = "xdotool mousemove --window \\$w 188 397 click 1; sleep 0.5; " + held("ctrl z");
    const Screenshot plain = shot("plain.png", "");
    const Screenshot undone = shot("undone.png", ctrl_z);
    const Screenshot redone = shot("redone.png", ctrl_z + "sleep 0.5; " + held("ctrl shift z"));
    INFO("stderr: " << redone.err);
    REQUIRE(plain.width == 1280);
    // The list's salmon text, anti-aliased edges included.
    const auto listed = [](unsigned char r, unsigned char g, unsigned char b) {
        return r >= 230 && g >= 110 && g <= 165 && b >= 90 && b <= 150;
    };
    CHECK(plain.count_if(listed) == 0);
    CHECK(redone.count_if(listed) > 30);     // "Disabled (1): 0.0"
    CHECK(redone.differing(plain) > 1000);   // the later layer's maps change too
    CHECK(undone.differing(plain) == 0);     // the click undone: the very same picture
}

TEST_CASE("gui: Ctrl+E opens Export, Enter writes the head's map as CSV, Ctrl+Q quits (xdotool)") {
    TempDir dir;
    const std::string err = dir.file("err");
    // Run from the temporary folder: the export goes to the working folder by default.
    // No --screenshot-after: the window stays until Ctrl+Q closes it (60 s at most).
    const std::string launch = "timeout 60 '" HEADSCOPE_GUI
                               "' --model builtin:toy-text --text 'The cat sat on the mat .' --size 1280x800 2>>'" +
                               err + "'";
    CHECK(drive_window(dir, "cd '" + dir.path().string() + "'", launch,
                       held("ctrl e") + "sleep 1; " + held("Return") + "sleep 1; " + held("ctrl q")) ==
          0);   // quit, not timed out (124)
    const std::string csv = headscope::test::read_bytes(dir.file("builtin-toy-text-head-0.0.csv"));
    INFO("stderr: " << headscope::test::read_bytes(err));
    CHECK(csv.rfind(",The,cat,sat,on,the,mat,.\r\n", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 8);   // the header and 7 queries
}

TEST_CASE("gui: zoomed in, Export writes the part in sight as SVG: one rect per cell in sight (xdotool)") {
    TempDir dir;
    const std::string err = dir.file("err");
    // The zoom test's 180 tokens and wheel notches: the part in sight lies below the causal
    // diagonal. A name typed with .svg picks the format.
    std::string sentence;
    for (int i = 0; i < 30; ++i) sentence += "the cat sat on the mat ";
    const std::string launch = "timeout 60 '" HEADSCOPE_GUI
                               "' --model builtin:toy-text --causal --view matrix --text '" +
                               sentence + "' --size 1280x800 2>>'" + err + "'";
    REQUIRE(drive_window(dir, "cd '" + dir.path().string() + "'", launch,
                         "xdotool mousemove --window \\$w 480 560; sleep 0.3; "
                         "for i in 1 2 3 4 5 6; do xdotool click 4; sleep 0.2; done; " +
                             held("ctrl e") + "sleep 1; " + held("ctrl a") + "xdotool type zoomed.svg; " +
                             held("Return") + "sleep 2; " + held("ctrl q")) == 0);
    INFO("stderr: " << headscope::test::read_bytes(err));
    // Read back by Python's XML parser: the cells, the labels along each axis, masked cells.
    const std::string script = dir.file("count.py");
    std::ofstream(script) << "import sys, xml.etree.ElementTree as E\n"
                             "ns = '{http://www.w3.org/2000/svg}'\n"
                             "root = E.parse(sys.argv[1]).getroot()\n"
                             "groups = {g.get('id'): list(g) for g in root.iter(ns + 'g')}\n"
                             "cells = [r for r in groups['cells'] if r.get('class') == 'cell']\n"
                             "print(len(cells), len(groups['query-labels']), len(groups['key-labels']),\n"
                             "      sum(r.get('fill') == '#969696' for r in cells))\n";
    const std::string counts = dir.file("counts");
    REQUIRE(std::system(
                ("/usr/bin/python3 '" + script + "' '" + dir.file("zoomed.svg") + "' > '" + counts + "'").c_str()) ==
            0);
    std::ifstream read(counts);
    long cells = 0, rows = 0, cols = 0, masked = -1;
    read >> cells >> rows >> cols >> masked;
    CHECK(rows * cols == cells);
    // 3.8x: about 180 / 3.8 = 47 rows and columns, and a sliver of the next.
    CHECK(rows >= 47);
    CHECK(rows <= 50);
    CHECK(cols >= 47);
    CHECK(cols <= 50);
    CHECK(masked == 0);
}

// What Ctrl+C over a hovered cell copies: the demo text model on `copy_sentence` with
// `flags`, the pointer moved by `pointer` (xdotool commands; $w the window), Ctrl+C, and
// the clipboard read back while the window lives (it owns the clipboard). The header
// line and the row's tab-separated fields.
constexpr const char* copy_sentence = "The cat sat on the mat .";
struct CopiedCell {
    std::string header;
    std::vector<std::string> fields;
};
CopiedCell copy_hovered_cell(const std::string& flags, const std::string& pointer) {
    TempDir dir;
    const std::string err = dir.file("err");
    const std::string copied = dir.file("copied");
    const std::string launch = "timeout 60 '" HEADSCOPE_GUI "' --model builtin:toy-text " + flags + " --text '" +
                               copy_sentence + "' --size 1280x800 2>>'" + err + "'";
    const int code = drive_window(dir, "", launch,
                                  pointer + " sleep 0.5; " + held("ctrl c") +
                                      "sleep 0.5; xclip -o -selection clipboard > '" + copied + "'; " + held("ctrl q"));
    INFO("stderr: " << headscope::test::read_bytes(err));
    REQUIRE(code == 0);
    std::istringstream lines(headscope::test::read_bytes(copied));
    CopiedCell cell;
    std::string row;
    std::getline(lines, cell.header);
    std::getline(lines, row);
    std::istringstream cells(row);
    for (std::string field; std::getline(cells, field, '\t');) cell.fields.push_back(field);
    return cell;
}

TEST_CASE("gui: Ctrl+C over a cell copies its query, key, weight and pre-softmax score, computed for the hover "
          "(xdotool, xclip)") {
    const CopiedCell copied = copy_hovered_cell("--layer 0 --head 0", "xdotool mousemove --window \\$w 640 420;");
    // The run kept no stages (the Matrix view asks for none): the score was computed for
    // the hovered head on demand.
    CHECK(copied.header == "query\tquery token\tkey\tkey token\tweight\tscore");
    REQUIRE(copied.fields.size() == 6);
    const int query = std::stoi(copied.fields[0]);
    const std::string& query_token = copied.fields[1];
    const int key = std::stoi(copied.fields[2]);
    const std::string& key_token = copied.fields[3];
    const float weight = std::stof(copied.fields[4]);
    const float score = std::stof(copied.fields[5]);
    // The engine's own map at that cell: what was under the pointer, to the last digit copied.
    const auto model = headscope::open_model("builtin:toy-text", headscope::ToyConfig{});
    const headscope::ModelInput input = model->encode_text(copy_sentence);
    headscope::RunOptions staged;
    staged.stages_layer = 0;
    const headscope::ModelTrace trace = model->forward(input, staged);
    REQUIRE(query >= 0);
    REQUIRE(key >= 0);
    REQUIRE(query < static_cast<int>(input.labels.size()));
    REQUIRE(key < static_cast<int>(input.labels.size()));
    CHECK(query_token == input.labels[static_cast<std::size_t>(query)]);
    CHECK(key_token == input.labels[static_cast<std::size_t>(key)]);
    CHECK(weight == trace.layers[0].heads[0].weights(query, key));
    CHECK(score == trace.layers[0].heads[0].scores(query, key));
}

TEST_CASE("gui: the Tokens view shows a long input a window at a time, around the pinned query") {
    // 420 tokens: some 33 rows fit. Query 300 pinned: its row is in sight, highlighted (the
    // selected row's colour), where the whole list would have put it 5,000 px down.
    std::string sentence;
    for (int i = 0; i < 60; ++i) sentence += " the cat sat on the mat ,";
    const auto shot = [&](int query) {
        return take_screenshot("--model builtin:toy-text --view tokens --query " + std::to_string(query) + " --text '" +
                               sentence + "' --size 1280x800");
    };
    constexpr headscope::Rgba8 pinned_row{30, 56, 87, 255};   // Dear ImGui's dark header colour, as drawn
    const Screenshot late = shot(300);
    const Screenshot early = shot(10);
    INFO("stderr: " << late.err);
    REQUIRE(late.exit_code == 0);
    CHECK(late.count(pinned_row) > 2000);
    CHECK(early.count(pinned_row) > 2000);
    CHECK(late.differing(early) > 1000);   // another window of tokens
}

TEST_CASE("gui: the Image view's [CLS] thumbnails cross out a disabled head") {
    const std::string flags = "--model builtin:tiny-shapes --view image --layer 3 --size 1280x800";
    const Screenshot plain = take_screenshot(flags);
    const Screenshot disabled = take_screenshot(flags + " --disable 3.1");
    INFO("stderr: " << disabled.err);
    REQUIRE(disabled.exit_code == 0);
    // The cross's red, drawn over the thumbnail (and nowhere else on the screen).
    const auto red = [](int r, int g, int b) { return r > 200 && g < 120 && b < 120; };
    CHECK(plain.count_if(red) < 20);
    CHECK(disabled.count_if(red) > 150);
}

TEST_CASE("gui: --version prints the program and its version, with no window") {
    TempDir dir;
    const std::string out = dir.file("out");
    CHECK(headscope::test::exit_code_of(std::system(("'" HEADSCOPE_GUI "' --version > '" + out + "'").c_str())) == 0);
    CHECK(headscope::test::read_bytes(out) == "headscope " HEADSCOPE_TEST_VERSION "\n");
}

TEST_CASE("gui: a session saved with Ctrl+S and reopened with --session gives the same picture (xdotool)") {
    TempDir dir;
    const std::string err = dir.file("err");
    const std::string choices = "--model builtin:toy-text --text 'The cat sat on the mat because the cat was tired .' "
                                "--layer 1 --head 2 --query 4 --disable 0.1 --colormap magma --size 1280x800";
    // Saved from the working folder (where the field starts), then quit.
    REQUIRE(drive_window(dir, "cd '" + dir.path().string() + "'",
                         "timeout 60 '" HEADSCOPE_GUI "' " + choices + " 2>>'" + err + "'",
                         held("ctrl s") + "sleep 1; " + held("Return") + "sleep 1; " + held("ctrl q")) == 0);
    const std::string session = dir.file("headscope-session.json");
    INFO("stderr: " << headscope::test::read_bytes(err));
    REQUIRE(std::filesystem::exists(session));
    const Screenshot direct = take_screenshot(choices, dir);
    const Screenshot reopened = take_screenshot_as_launched("--session '" + session + "' --size 1280x800", dir);
    REQUIRE(direct.exit_code == 0);
    REQUIRE(reopened.exit_code == 0);
    CHECK(reopened.differing(direct) == 0);
    // Not the picture any launch gives: the session's choices are in it.
    CHECK(reopened.differing(take_screenshot("--model builtin:toy-text --size 1280x800", dir)) > 1000);
}

TEST_CASE("gui: a session keeps the Matrix view's zoom: reopened, the same corner is in sight (xdotool)") {
    TempDir dir;
    const std::string err = dir.file("err");
    // The zoom test's 180 tokens and wheel notches below the causal diagonal, then saved.
    std::string sentence;
    for (int i = 0; i < 30; ++i) sentence += "the cat sat on the mat ";
    const std::string choices =
        "--model builtin:toy-text --causal --view matrix --text '" + sentence + "' --size 1280x800";
    REQUIRE(drive_window(dir, "cd '" + dir.path().string() + "'",
                         "timeout 60 '" HEADSCOPE_GUI "' " + choices + " 2>>'" + err + "'",
                         "xdotool mousemove --window \\$w 480 560; sleep 0.3; "
                         "for i in 1 2 3 4 5 6; do xdotool click 4; sleep 0.2; done; " +
                             held("ctrl s") + "sleep 1; " + held("Return") + "sleep 1; " + held("ctrl q")) == 0);
    const std::string session = dir.file("headscope-session.json");
    INFO("stderr: " << headscope::test::read_bytes(err));
    const nlohmann::json saved = nlohmann::json::parse(headscope::test::read_bytes(session));
    CHECK(saved.at("views").at("matrix").at("zoom").get<double>() == doctest::Approx(std::pow(1.25, 6)).epsilon(0.01));
    const Screenshot fresh = take_screenshot(choices, dir);
    const Screenshot reopened = take_screenshot_as_launched("--session '" + session + "' --size 1280x800", dir);
    REQUIRE(reopened.exit_code == 0);
    CHECK(fresh.count(headscope::masked_colour) > 60000);                                           // the whole map
    CHECK(reopened.count(headscope::masked_colour) < fresh.count(headscope::masked_colour) / 20);   // zoomed in
}

TEST_CASE("gui: the Heads view's Show on the Model grid opens it coloured by importance, kept in a session "
          "(xdotool)") {
    TempDir dir;
    const std::string err = dir.file("err");
    const std::string choices = "--fresh --view heads --scan-importance --size 1280x800";
    // The button beside "Scan again" once the scan is in; then the session saved and quit.
    REQUIRE(drive_window(dir, "cd '" + dir.path().string() + "'",
                         "timeout 60 '" HEADSCOPE_GUI "' " + choices + " 2>>'" + err + "'",
                         "sleep 3; xdotool mousemove --window \\$w 529 116 click 1; sleep 1; " + held("ctrl s") +
                             "sleep 1; " + held("Return") + "sleep 1; " + held("ctrl q")) == 0);
    INFO("stderr: " << headscope::test::read_bytes(err));
    const nlohmann::json saved = nlohmann::json::parse(headscope::test::read_bytes(dir.file("headscope-session.json")));
    CHECK(saved.at("view") == "model");
    CHECK(saved.at("views").at("model").at("importance") == true);
    // Reopened with the scan run again: the grid framed in the importance's colours, not
    // as the plain Model view draws it.
    const std::string session = dir.file("headscope-session.json");
    const Screenshot reopened =
        take_screenshot_as_launched("--session '" + session + "' --scan-importance --size 1280x800", dir);
    const Screenshot plain = take_screenshot("--fresh --view model --scan-importance --size 1280x800", dir);
    REQUIRE(reopened.exit_code == 0);
    CHECK(reopened.differing(plain) > 2000);
}

TEST_CASE("gui: a plain launch comes back where the window was left, --fresh on the demo (xdotool)") {
    TempDir dir;   // drive_window points XDG_CONFIG_HOME here: the last session lives in it
    const std::string err = dir.file("err");
    const auto title_of = [&](const std::string& flags) {
        const std::string title = dir.file("title");
        std::filesystem::remove(title);
        REQUIRE(drive_window(dir, "", "timeout 60 '" HEADSCOPE_GUI "' " + flags + " 2>>'" + err + "'",
                             "xdotool getwindowname \\$w > '" + title + "'; " + held("ctrl q")) == 0);
        std::ifstream read(title);
        std::string name;
        std::getline(read, name);
        return name;
    };
    INFO("stderr: " << headscope::test::read_bytes(err));
    CHECK(title_of("--model builtin:toy-text --text 'The cat sat .' --size 1280x800") ==
          "Headscope \u2014 builtin:toy-text \u2014 The cat sat .");
    REQUIRE(std::filesystem::exists(dir.file("headscope/last-session.json")));
    CHECK(title_of("--size 1280x800") == "Headscope \u2014 builtin:toy-text \u2014 The cat sat .");
    CHECK(title_of("--fresh --size 1280x800").rfind("Headscope \u2014 builtin:tiny-story \u2014 ", 0) == 0);
    // A last session that cannot be read: the demo, and one line saying why.
    std::ofstream(dir.file("headscope/last-session.json")) << "{ not json";
    CHECK(title_of("--size 1280x800").rfind("Headscope \u2014 builtin:tiny-story \u2014 ", 0) == 0);
    CHECK(headscope::test::read_bytes(err).find("headscope: the last session was not restored (") != std::string::npos);
}

TEST_CASE("gui: a GPT-2 folder opens with --model: top-5 next tokens, and the intact model beside disabled heads") {
    const std::string gpt2 =
        "--model '" HEADSCOPE_SOURCE_DIR "/tests/checkpoints/gpt2_tiny' --text 'The cat sat on the mat'";
    const TempDir config;
    const Screenshot plain = take_screenshot(gpt2, config);
    INFO("stderr: " << plain.err);
    REQUIRE(plain.exit_code == 0);
    // Five bar tracks of 120 x ~12 px, less what the bars cover (probabilities are small here).
    CHECK(plain.count(prediction_track) > 3000);
    CHECK(plain.count(intact_track) < 100);   // no comparison without disabled heads
    // It is remembered for the next session, in the config folder given.
    const std::string recent = headscope::test::read_bytes(config.file("headscope/recent.txt"));
    CHECK(recent.find("model " HEADSCOPE_SOURCE_DIR "/tests/checkpoints/gpt2_tiny\n") != std::string::npos);

    const Screenshot ablated = take_screenshot(gpt2 + " --disable 0.0,1.1", config);
    INFO("stderr: " << ablated.err);
    REQUIRE(ablated.exit_code == 0);
    CHECK(ablated.count(prediction_track) > 3000);
    CHECK(ablated.count(intact_track) > 3000);
    CHECK(ablated.count(intact_bar) > 50);

    // A model without a head (the demo text model) has no panel; a classifier shows its classes.
    CHECK(take_screenshot("").count(prediction_track) < 100);
    const Screenshot vit = take_screenshot("--model '" HEADSCOPE_SOURCE_DIR "/tests/checkpoints/vit_tiny'");
    CHECK(vit.exit_code == 0);
    CHECK(vit.count(prediction_track) > 3000);
}

TEST_CASE("gui: a folder that does not load: its error in the banner, the window on the demo model, exit 2") {
    const Screenshot bad = take_screenshot("--model '" HEADSCOPE_SOURCE_DIR "/tests/checkpoints/bad/config_mismatch'");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("config_mismatch/model.safetensors") != std::string::npos);
    CHECK(bad.width == 1280);
    // The demo model's matrix is on screen under the banner.
    CHECK(bad.count(headscope::colormap_lookup(headscope::Colormap::viridis, 0.0f)) > 60 * 30 * 30);
}

TEST_CASE("gui: the Model grid coloured by a metric frames each head in the metric's colour (magma)") {
    using headscope::Colormap;
    const headscope::Rgba8 top = headscope::colormap_lookup(Colormap::magma, 1.0f);
    const headscope::Rgba8 bottom = headscope::colormap_lookup(Colormap::magma, 0.0f);
    const Screenshot plain = take_screenshot("--view model");
    const Screenshot coloured = take_screenshot("--view model --metric prev_token --colour-by-metric");
    INFO("stderr: " << coloured.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(coloured.exit_code == 0);
    // The highest-scoring head (the previous-token head) is framed in magma's top colour,
    // the lowest in its bottom one: frames of 5 px around thumbnails of 48+ px.
    CHECK(coloured.count(top) > plain.count(top) + 4 * 40 * 3);
    CHECK(coloured.count(bottom) > plain.count(bottom) + 4 * 40 * 3);
    // Sorting moves the thumbnails, not the frames' colours.
    const Screenshot sorted = take_screenshot("--view model --metric prev_token --colour-by-metric --sort-by-metric");
    REQUIRE(sorted.exit_code == 0);
    CHECK(sorted.differing(coloured) > 3000);
}

TEST_CASE("gui: the Rollout view draws the rollout over the picture, and bars over the tokens for text") {
    const std::string vit = "--model builtin:toy-vit --image '" HEADSCOPE_ASSETS_DIR "/shapes.png'";
    const Screenshot rollout = take_screenshot(vit + " --view rollout");
    const Screenshot image = take_screenshot(vit + " --view image");
    INFO("stderr: " << rollout.err);
    REQUIRE(rollout.exit_code == 0);
    REQUIRE(image.exit_code == 0);
    const auto reddish = [](int r, int g, int b) { return r > g + 30 && r > b + 60; };
    CHECK(rollout.count_if(reddish) > 3000);   // the picture's red shapes under the overlay
    CHECK(rollout.differing(image) > 10000);
    const Screenshot text = take_screenshot("--view rollout");
    INFO("stderr: " << text.err);
    REQUIRE(text.exit_code == 0);
    CHECK(text.differing(take_screenshot("--view matrix")) > 10000);
}

TEST_CASE("gui: the Similarity view draws the divergence matrix and the map of heads") {
    const Screenshot shot = take_screenshot("--view similarity");
    INFO("stderr: " << shot.err);
    REQUIRE(shot.exit_code == 0);
    // The diagonal (each head against itself: 0 bits) in the colour map's bottom: 8
    // cells of at least 20 x 20 px.
    CHECK(shot.count(headscope::colormap_lookup(headscope::Colormap::viridis, 0.0f)) > 8 * 18 * 18);
    // Dots coloured by layer: layer 0 at cividis' bottom, layer 1 at its top.
    CHECK(shot.count(headscope::colormap_lookup(headscope::Colormap::cividis, 0.0f)) > 4 * 30);
    CHECK(shot.count(headscope::colormap_lookup(headscope::Colormap::cividis, 1.0f)) > 4 * 30);
}

TEST_CASE("gui: the head-importance scan runs off the UI thread and shows a layers x heads map") {
    const Screenshot heads = take_screenshot("--view heads");
    const Screenshot scanned = take_screenshot("--view heads --scan-importance");
    INFO("stderr: " << scanned.err);
    REQUIRE(heads.exit_code == 0);
    REQUIRE(scanned.exit_code == 0);
    // The most important head's cell, in the colour map's top colour (cells of 40+ px).
    const headscope::Rgba8 top = headscope::colormap_lookup(headscope::Colormap::viridis, 1.0f);
    CHECK(scanned.count(top) > heads.count(top) + 30 * 30);
}

TEST_CASE("gui: --keep-mass outlines, DINO-style, the patches holding that share of each head's attention") {
    const std::string vit = "--model builtin:toy-vit --view image --image '" HEADSCOPE_ASSETS_DIR "/shapes.png'";
    const Screenshot plain = take_screenshot(vit);
    const Screenshot kept = take_screenshot(vit + " --keep-mass 60");
    INFO("stderr: " << kept.err);
    REQUIRE(plain.exit_code == 0);
    REQUIRE(kept.exit_code == 0);
    // White contour lines (2.5 px on the picture, 1.5 px on each head's thumbnail).
    const headscope::Rgba8 white{255, 255, 255, 255};
    CHECK(kept.count(white) > plain.count(white) + 2000);
    // Beside a session that saved the Image view without them, the flag still outlines:
    // a flag given on purpose goes over the session's view settings.
    const TempDir dir;
    const std::string session = dir.file("s.json");
    headscope::test::write_bytes(session, R"({"headscope_session": 1, "model": {"name": "builtin:toy-vit"}, )"
                                          R"("image": ")" HEADSCOPE_ASSETS_DIR R"(/shapes.png", "view": "image", )"
                                          R"("views": {"image": {"keep_mass": false}}})");
    const Screenshot reopened = take_screenshot_as_launched("--session '" + session + "'", dir);
    const Screenshot flagged = take_screenshot_as_launched("--session '" + session + "' --keep-mass 60", dir);
    REQUIRE(reopened.exit_code == 0);
    REQUIRE(flagged.exit_code == 0);
    CHECK(flagged.count(white) > reopened.count(white) + 2000);
}

TEST_CASE("gui: maps on demand draw the same screens as kept maps, the status bar names the mode") {
    // Every view that reads a map by head: the map computed again is the same bits, so
    // the pixels match outside the status bar (which shows the mode, timings and memory).
    for (const char* view : {"--view matrix --layer 1 --head 2", "--view tokens", "--view compare --disable 0.1",
                             "--view rollout", "--view stages --layer 1"}) {
        CAPTURE(view);
        const Screenshot kept = take_screenshot(std::string(view) + " --maps keep");
        const Screenshot streamed = take_screenshot(std::string(view) + " --maps on-demand");
        INFO("stderr: " << streamed.err);
        REQUIRE(kept.exit_code == 0);
        REQUIRE(streamed.exit_code == 0);
        CHECK(streamed.differing(kept) == 0);
    }
}

TEST_CASE("gui: Compare's three maps zoom together, and a cell of B copies its values in A, B and A - B (xdotool)") {
    // A is head 0.0, B the next head (0.1) until B is chosen. Three wheel notches over A's
    // upper left, then the pointer on B's middle: the cell there is one the zoom brought
    // into sight in B too.
    const CopiedCell copied = copy_hovered_cell(
        "--view compare --layer 0 --head 0",
        "xdotool mousemove --window \\$w 420 230; sleep 0.3; xdotool click 4; sleep 0.3; xdotool click 4; sleep 0.3; "
        "xdotool click 4; sleep 0.5; xdotool mousemove --window \\$w 790 300;");
    CHECK(copied.header == "query\tquery token\tkey\tkey token\tA\tB\tA - B");
    REQUIRE(copied.fields.size() == 7);
    const int query = std::stoi(copied.fields[0]);
    const std::string& query_token = copied.fields[1];
    const int key = std::stoi(copied.fields[2]);
    const float a = std::stof(copied.fields[4]);
    const float b = std::stof(copied.fields[5]);
    const float difference = std::stof(copied.fields[6]);
    const auto model = headscope::open_model("builtin:toy-text", headscope::ToyConfig{});
    const headscope::ModelInput input = model->encode_text(copy_sentence);
    const headscope::ModelTrace trace = model->forward(input, headscope::RunOptions{});
    const auto T = static_cast<int>(input.labels.size());
    REQUIRE(query >= 0);
    REQUIRE(key >= 0);
    REQUIRE(query < T);
    REQUIRE(key < T);
    // Unzoomed, B's middle is its middle cell; zoomed about A's upper left, an earlier one.
    CHECK(query + key < T - 1);
    CHECK(query_token == input.labels[static_cast<std::size_t>(query)]);
    CHECK(a == trace.layers[0].heads[0].weights(query, key));
    CHECK(b == trace.layers[0].heads[1].weights(query, key));
    CHECK(difference == doctest::Approx(a - b).epsilon(1e-6));
}

TEST_CASE("gui: hovering a Stages map names its cell, and Ctrl+C copies the engine's value there (xdotool)") {
    // The pointer on the first map, X = norm(x) [T, E], at the top left of the view.
    const CopiedCell copied =
        copy_hovered_cell("--view stages --layer 0 --head 0", "xdotool mousemove --window \\$w 420 160;");
    CHECK(copied.header == "stage\trow\trow token\tfeature\tvalue");
    const std::vector<std::string>& fields = copied.fields;
    REQUIRE(fields.size() == 5);
    CHECK(fields[0] == "X = norm(x), the layer's input");
    const int i = std::stoi(fields[1]);
    const int j = std::stoi(fields[3]);
    const float value = std::stof(fields[4]);
    const auto model = headscope::open_model("builtin:toy-text", headscope::ToyConfig{});
    const headscope::ModelInput input = model->encode_text(copy_sentence);
    headscope::RunOptions options;
    options.stages_layer = 0;
    const headscope::ModelTrace trace = model->forward(input, options);
    const headscope::Matrix& x = trace.layers[0].input;
    REQUIRE(i >= 0);
    REQUIRE(j >= 0);
    REQUIRE(i < x.rows());
    REQUIRE(j < x.cols());
    CHECK(fields[2] == input.labels[static_cast<std::size_t>(i)]);
    CHECK(value == x(i, j));
}
