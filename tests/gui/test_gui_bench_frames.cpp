// `headscope --bench-frames N`: the frame timer's statistics and line (no window), and
// the app under xvfb-run timing N settled frames and exiting with one line on stdout.

#include "app/gui/frame_timer.h"
#include "core/render/png_export.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <vector>

using headscope::gui::FrameTimer;
using headscope::test::TempDir;

namespace {

struct Run {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// `args` after the app's path (`program`: the shipped window, or the test build's);
// `display`: under xvfb-run (the argument errors need none).
Run run_app(const std::string& args, bool display, const char* program = HEADSCOPE_GUI) {
    const TempDir dir;
    const std::string command = "XDG_CONFIG_HOME='" + dir.path().string() + "' " +
                                (display ? headscope::test::xvfb_run_prefix(dir) : "") + "'" + program + "' " + args +
                                " >'" + dir.file("out") + "' 2>'" + dir.file("err") + "' </dev/null";
    Run run;
    run.exit_code = headscope::test::run_command(command, dir.file("err"));
    run.out = headscope::test::read_bytes(dir.file("out"));
    run.err = headscope::test::read_bytes(dir.file("err"));
    return run;
}

long count_lines(const std::string& text) {
    long n = 0;
    for (char c : text) n += c == '\n';
    return n;
}

}   // namespace

TEST_CASE("bench-frames: the timer's mean, max and nearest-rank p95, and its line") {
    FrameTimer timer;
    CHECK(timer.count() == 0);
    CHECK(timer.mean_ms() == 0.0);
    CHECK(timer.p95_ms() == 0.0);
    // 1 .. 20 ms, out of order: p95 is the 19th smallest (ceil(0.95 * 20)).
    for (int ms : {20, 3, 1, 2, 19, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}) timer.add(ms);
    CHECK(timer.count() == 20);
    CHECK(std::abs(timer.mean_ms() - 10.5) <= 1e-12);
    CHECK(timer.max_ms() == 20.0);
    CHECK(timer.p95_ms() == 19.0);
    CHECK(timer.summary("model", 197) ==
          "headscope: bench-frames: 20 frames, view model, T=197, mean 10.50 ms, max 20.00 ms, p95 19.00 ms "
          "(CPU per frame, swap excluded)");
    CHECK(timer.summary("matrix", std::nullopt) ==
          "headscope: bench-frames: 20 frames, view matrix, mean 10.50 ms, max 20.00 ms, p95 19.00 ms "
          "(CPU per frame, swap excluded)");

    FrameTimer hundred;
    for (int ms = 1; ms <= 100; ++ms) hundred.add(ms);
    CHECK(hundred.p95_ms() == 95.0);
    FrameTimer one;
    one.add(2.5);
    CHECK(one.p95_ms() == 2.5);
    CHECK(one.max_ms() == 2.5);
}

TEST_CASE("bench-frames: start / stop measure the time between them") {
    FrameTimer timer;
    timer.start();
    const auto until = FrameTimer::Clock::now() + std::chrono::milliseconds(5);
    while (FrameTimer::Clock::now() < until) {}
    timer.stop();
    REQUIRE(timer.count() == 1);
    CHECK(timer.max_ms() >= 5.0);
    CHECK(timer.max_ms() < 1000.0);
}

TEST_CASE("bench-frames: the app times N frames of the model grid and prints one line") {
    const Run run = run_app("--bench-frames 30 --model builtin:toy-vit --view model", true);
    INFO("stdout: " << run.out);
    INFO("stderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(count_lines(run.out) == 1);
    const std::regex line(R"(headscope: bench-frames: 30 frames, view model(, T=\d+)?, mean ([0-9.]+) ms, )"
                          R"(max ([0-9.]+) ms, p95 ([0-9.]+) ms \(CPU per frame, swap excluded\)\n)");
    std::smatch m;
    REQUIRE(std::regex_match(run.out, m, line));
    const double mean = std::stod(m[2].str());
    const double max = std::stod(m[3].str());
    const double p95 = std::stod(m[4].str());
    CHECK(mean > 0.0);
    CHECK(mean <= max);
    CHECK(p95 <= max);
}

TEST_CASE("bench-frames --bench-recompute: frames timed whole while the worker keeps recomputing") {
    const Run run = run_app("--bench-frames 60 --bench-recompute --model builtin:toy-vit --view model", true);
    INFO("stdout: " << run.out);
    INFO("stderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(count_lines(run.out) == 1);
    const std::regex line(
        R"(headscope: bench-frames: 60 frames, view model(, T=\d+)?, mean ([0-9.]+) ms, max ([0-9.]+) ms, )"
        R"(p95 ([0-9.]+) ms \(whole frames, swap included\), (\d+) recomputes, )"
        R"(lowest ([0-9.]+) fps \(slowest frame ([0-9.]+) ms\)\n)");
    std::smatch m;
    REQUIRE(std::regex_match(run.out, m, line));
    CHECK(std::stoi(m[5].str()) >= 1);   // the toy model recomputes within a few frames
    const double max = std::stod(m[3].str());
    CHECK(std::stod(m[7].str()) == doctest::Approx(max).epsilon(0.01));
    CHECK(std::stod(m[6].str()) == doctest::Approx(1000.0 / max).epsilon(0.01));
    // Without --bench-frames it is refused in one line.
    const Run alone = run_app("--bench-recompute", false);
    CHECK(alone.exit_code == 2);
    CHECK(count_lines(alone.err) == 1);
    CHECK(alone.err.find("--bench-recompute") != std::string::npos);
}

TEST_CASE("bench-frames --bench-recompute: a map too big for a frame is rebuilt off the window's thread, and lands") {
    // 128 x 128 px at its own resolution in 8 px patches: 256 patches + [CLS], a 257 x 257
    // matrix, past the size the window colours on a thread of its own (app_window.cpp).
    const TempDir dir;
    headscope::RgbaImage picture{128, 128, {}};
    for (int y = 0; y < 128; ++y) {
        for (int x = 0; x < 128; ++x) {
            const auto v = static_cast<std::uint8_t>((x * 2 + y) % 256);
            picture.pixels.insert(picture.pixels.end(),
                                  {v, static_cast<std::uint8_t>(255 - v), static_cast<std::uint8_t>(x), 255});
        }
    }
    headscope::write_png(dir.file("big.png"), picture);
    const Run run = run_app("--bench-frames 60 --bench-recompute --model '" HEADSCOPE_SOURCE_DIR
                            "/tests/checkpoints/vit_tiny' --own-resolution --image '" +
                                dir.file("big.png") + "' --view matrix",
                            true);
    INFO("stdout: " << run.out);
    INFO("stderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    const std::regex line(R"(headscope: bench-frames: 60 frames, view matrix, .*, (\d+) recomputes, .*\n)");
    std::smatch m;
    REQUIRE(std::regex_match(run.out, m, line));
    // A new request goes out only once the screen shows the last result (settled): each
    // recompute after the first means a rebuild in the background finished and was uploaded.
    CHECK(std::stoi(m[1].str()) >= 2);
}

TEST_CASE("bench-frames: a count below 1, or with --screenshot, is a one-line error") {
    for (const char* args : {"--bench-frames 0", "--bench-frames -3", "--bench-frames many"}) {
        const Run run = run_app(args, false);
        INFO(args << " stderr: " << run.err);
        CHECK(run.exit_code == 2);
        CHECK(run.out.empty());
        CHECK(count_lines(run.err) == 1);
        CHECK(run.err.find("--bench-frames") != std::string::npos);
    }
    const Run both = run_app("--bench-frames 5 --screenshot /nonexistent/shot.png", false);
    CHECK(both.exit_code == 2);
    CHECK(count_lines(both.err) == 1);
    CHECK(both.err.find("cannot be used with") != std::string::npos);
}

TEST_CASE("toggle-bench: the test window switches the head off and on, one line per switch with its times") {
    const Run run = run_app("--model builtin:toy-text --layer 1 --head 2 --toggle-bench 2 --toggle-gap 0.2", true,
                            HEADSCOPE_TEST_WINDOW);
    INFO("stderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    const std::regex line(
        R"(toggle ([12]): head 1\.2 (off|on): compute ([0-9.]+) ms \(([^)]+)\), on screen ([0-9.]+) ms )"
        R"(after the switch, settled ([0-9.]+) ms, ([0-9]+) page faults to the screen)"
        R"((; the engine alone right after: ([0-9.]+) ms)?\n)");
    auto it = std::sregex_iterator(run.out.begin(), run.out.end(), line);
    std::vector<std::smatch> lines(it, std::sregex_iterator());
    REQUIRE(lines.size() == 2);
    CHECK(lines[0][2] == "off");   // the first switch turns the head off, the second on again
    CHECK(lines[1][2] == "on");
    // Off: layer 1 and after are computed again (toy-text has 2 layers); on again: the run
    // shown before the switch off is the answer, and nothing is computed.
    CHECK(lines[0][4] == "layers 1-1");
    CHECK(lines[1][4] == "no layer, a held run");
    for (const std::smatch& m : lines) {
        const double compute = std::stod(m[3]);
        const double on_screen = std::stod(m[5]);
        const double settled = std::stod(m[6]);
        CHECK(compute >= 0.0);         // a held run's copy can take under 0.05 ms
        CHECK(on_screen >= compute);   // the run is inside the time to the screen
        CHECK(settled >= on_screen);
    }
    // The engine alone, the same switch, in the same process: the ratio the window is judged by.
    std::smatch engine;
    REQUIRE(std::regex_search(
        run.out, engine,
        std::regex(R"(engine: head 1\.2 off recomputed by the model alone after each switch off: median )"
                   R"(([0-9.]+) ms \(([0-9]+) page faults\); the window's switches off on screen: median )"
                   R"(([0-9.]+) ms; paired, the window took ([0-9.]+) x the engine \(median of 1\)\n)")));
    // A pair was timed (the window held the intact run to resume from), on the switch off's line.
    REQUIRE(lines[0][9].matched);
    CHECK(!lines[1][9].matched);
    CHECK(std::stod(engine[1]) == doctest::Approx(std::stod(lines[0][9])).epsilon(0.001));
    CHECK(std::stod(engine[1]) > 0.0);
    CHECK(std::stod(engine[3]) == doctest::Approx(std::stod(lines[0][5])).epsilon(0.001));
    CHECK(std::stod(engine[4]) == doctest::Approx(std::stod(engine[3]) / std::stod(engine[1])).epsilon(0.02));
    CHECK(run_app("--toggle-bench 2 --soak 5", false, HEADSCOPE_TEST_WINDOW).exit_code != 0);
}

TEST_CASE("type-bench: the test window types at the end of the input, each edit beside the engine's own") {
    const Run run = run_app("--model builtin:tiny-story --tokens 5,6,7,8 --type-bench 2 --toggle-gap 0.2", true,
                            HEADSCOPE_TEST_WINDOW);
    INFO("stderr: " << run.err);
    REQUIRE(run.exit_code == 0);
    const std::regex line(R"(type ([12]): typed at the end: compute ([0-9.]+) ms \(([0-9]+) positions reused\), )"
                          R"(on screen ([0-9.]+) ms after the switch, settled ([0-9.]+) ms, [0-9]+ page faults to )"
                          R"(the screen; the engine alone right after: ([0-9.]+) ms\n)");
    auto it = std::sregex_iterator(run.out.begin(), run.out.end(), line);
    std::vector<std::smatch> lines(it, std::sregex_iterator());
    REQUIRE(lines.size() == 2);
    // Token ids: the first id typed again, one position more each time; every earlier
    // position reused, and the engine's pair computed from the run shown before.
    CHECK(lines[0][3] == "4");
    CHECK(lines[1][3] == "5");
    for (const std::smatch& m : lines) {
        CHECK(std::stod(m[4]) >= std::stod(m[2]));
        CHECK(std::stod(m[6]) > 0.0);
    }
    CHECK(std::regex_search(run.out, std::regex(R"(engine: the same edit recomputed by the model alone after each: )"
                                                R"(median [0-9.]+ ms \([0-9]+ page faults\); the window's edits on )"
                                                R"(screen: median [0-9.]+ ms; paired, the window took [0-9.]+ x the )"
                                                R"(engine \(median of 2\)\n)")));
    CHECK(run_app("--type-bench 2 --toggle-bench 2", false, HEADSCOPE_TEST_WINDOW).exit_code != 0);
}
