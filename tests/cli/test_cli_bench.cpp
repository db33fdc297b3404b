// headscope-cli bench --on-demand: a run that keeps no map (each reduced to its summary
// as the forward makes it) reports what the contract says, and its peak memory grows with
// T^2 for the few maps it holds at once, where a run that keeps every map grows with
// L x H of them: two lengths, the slope of each, from the process's own peak RSS.

#include "cli/cli_runner.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace headscope::test;

namespace {

// builtin:toy-text with 4 layers of 8 heads, on T token ids; its JSON line.
nlohmann::json bench(int T, bool on_demand) {
    std::string ids;
    for (int i = 0; i < T; ++i) ids.append(ids.empty() ? "" : ",").append(std::to_string(1000 + i * 7919 % 50000));
    std::vector<std::string> args = {"bench",
                                     "--model",
                                     "builtin:toy-text",
                                     "--max-tokens",
                                     "4096",
                                     "--layers",
                                     "4",
                                     "--heads",
                                     "8",
                                     "--tokens",
                                     ids,
                                     "--repeat",
                                     "1"};
    if (on_demand) args.push_back("--on-demand");
    const RunResult r = run_cli(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

}   // namespace

TEST_CASE("bench --on-demand: no map kept, a summary per head, heads computed again, memory grows with a few maps") {
    const nlohmann::json small = bench(512, true);
    CHECK(small.at("maps_kept") == false);
    CHECK(small.at("summaries") == 32);
    CHECK(small.at("maps") == 32);
    CHECK(small.at("head_map_ms_median").get<double>() >= 0.0);
    CHECK(small.at("head_map_ms_max").get<double>() >= small.at("head_map_ms_median").get<double>());
    if (sanitized_build()) return;   // AddressSanitizer's shadow and quarantine swamp the peaks
    const nlohmann::json large = bench(2048, true);
    // One [T, T] float map grows by (2048^2 - 512^2) * 4 bytes = 15 MiB between the two.
    const double map_growth_mb = (2048.0 * 2048.0 - 512.0 * 512.0) * 4.0 / (1 << 20);
    const double streamed = large.at("peak_rss_mb").get<double>() - small.at("peak_rss_mb").get<double>();
    const double kept =
        bench(2048, false).at("peak_rss_mb").get<double>() - bench(512, false).at("peak_rss_mb").get<double>();
    INFO("peak RSS growth, streamed: " << streamed << " MiB; kept: " << kept << " MiB; one map: " << map_growth_mb);
    CHECK(kept > 24 * map_growth_mb);      // 32 maps kept, and the proof that the slope shows
    CHECK(streamed < 8 * map_growth_mb);   // a map per thread, the one computed again, the mask
}

TEST_CASE("bench --on-demand: not with --incremental or --appended") {
    check_bad_input(
        run_cli({"bench", "--model", "builtin:toy-text", "--text", "a b c", "--on-demand", "--appended", "1"}),
        "--on-demand: not with --incremental or --appended");
}

TEST_CASE("bench --as-window: the window's request for the same edit, beside the engine's recompute") {
    for (const std::vector<std::string>& edit : {std::vector<std::string>{"--disable-heads", "1.2", "--incremental"},
                                                 std::vector<std::string>{"--appended", "2"}}) {
        std::vector<std::string> args = {"bench",    "--model", "builtin:tiny-story", "--text", "In the beginning God",
                                         "--repeat", "1",       "--as-window"};
        args.insert(args.end(), edit.begin(), edit.end());
        const RunResult r = run_cli(args);
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        const nlohmann::json out = nlohmann::json::parse(r.out);
        CHECK(out.at("window_recompute_ms_median").get<double>() > 0.0);
        CHECK(out.at("window_over_engine").get<double>() ==
              doctest::Approx(out.at("window_recompute_ms_median").get<double>() /
                              out.at("recompute_ms_median").get<double>()));
        CHECK(out.at("window_maps_streamed") == false);
        // The maps go up with the numbers or before them, inside the round (one round here).
        const double maps_ms = out.at("window_maps_ms_median").get<double>();
        CHECK(maps_ms > 0.0);
        CHECK(maps_ms <= out.at("window_recompute_ms_median").get<double>());
        CHECK(out.at("window_maps_over_engine").get<double>() ==
              doctest::Approx(maps_ms / out.at("recompute_ms_median").get<double>()));
    }
    check_bad_input(run_cli({"bench", "--model", "builtin:toy-text", "--text", "a b c", "--as-window"}),
                    "--as-window needs --incremental or --appended");
}
