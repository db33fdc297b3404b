// `headscope-cli analyze`: the JSON and CSV the analysis issue defines, on the demo
// models and on checkpoints (a GPT-2 measures importance as KL of its prediction),
// and bad requests refused in one line with nothing written.

#include "cli/cli_runner.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints";
const std::string shapes = std::string(HEADSCOPE_ASSETS_DIR) + "/shapes.png";

nlohmann::json analyze_json(std::vector<std::string> args, const TempDir& dir) {
    const std::string out = dir.file("analysis.json");
    args.insert(args.begin(), "analyze");
    args.push_back("--out");
    args.push_back(out);
    const RunResult r = run_cli(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(read_bytes(out));
}

}   // namespace

TEST_CASE("analyze: metrics of the demo text model, every head with its layer and head") {
    const TempDir dir;
    const auto json =
        analyze_json({"--model", "builtin:toy-text", "--text", "the cat sat on the mat the cat sat", "--metrics"}, dir);
    REQUIRE(json["heads"].size() == 8);
    CHECK(json["tokens"].size() == 9);
    std::set<std::pair<int, int>> seen;
    for (const auto& head : json["heads"]) {
        seen.emplace(head["layer"].get<int>(), head["head"].get<int>());
        CHECK(head["entropy"].get<double>() >= 0.0);
        CHECK(head["entropy_norm"].get<double>() <= 1.0 + 1e-6);   // float weights: a uniform row rounds a hair above 1
        CHECK(head["max_weight"].get<double>() <= 1.0 + 1e-9);
        CHECK(head["induction"].is_number());   // "the cat sat" repeats
    }
    CHECK(seen.size() == 8);
    CHECK_FALSE(json.contains("rollout"));
    CHECK_FALSE(json.contains("importance"));
}

TEST_CASE("analyze: CSV has a header and one row per head") {
    const TempDir dir;
    const std::string out = dir.file("heads.csv");
    const RunResult r = run_cli({"analyze", "--model", "builtin:toy-text", "--text", "a b c d", "--importance",
                                 "--metrics", "--similarity", "--out", out});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string csv = read_bytes(out);
    CHECK(count_lines(csv) == 9);
    CHECK(csv.rfind("layer,head,entropy,", 0) == 0);
    CHECK(csv.find(",importance_relative_change,mds_x,mds_y\n") != std::string::npos);
    CHECK(csv.find("\n1,3,") != std::string::npos);
}

TEST_CASE("analyze: rollout, similarity and importance sections") {
    const TempDir dir;
    const auto json = analyze_json({"--model", "builtin:toy-vit", "--image", shapes, "--rollout", "--fusion", "max",
                                    "--discard-ratio", "0.5", "--similarity", "--importance"},
                                   dir);
    const auto& rollout = json["rollout"];
    CHECK(rollout["fusion"] == "max");
    CHECK(rollout["discard_ratio"] == 0.5);
    CHECK(rollout["start_layer"] == 0);
    CHECK(rollout["end_layer"] == 1);
    const auto& matrix = rollout["matrix"];
    REQUIRE(matrix.size() == 197);
    for (const auto& row : matrix) {
        double sum = 0.0;
        for (const auto& v : row) sum += v.get<double>();
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));   // rows of a product of row-stochastic matrices
    }
    const auto& similarity = json["similarity"];
    CHECK(similarity["unit"] == "bits");
    REQUIRE(similarity["heads"].size() == 8);
    std::vector<int> order = similarity["order"].get<std::vector<int>>();
    std::sort(order.begin(), order.end());
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    for (int i = 0; i < 8; ++i) CHECK(similarity["divergence"][i][i] == 0.0);
    CHECK(json["importance"]["measure"] == "relative_change");
    CHECK(json["importance"]["heads"].size() == 8);
    // With no section asked for besides, metrics are not written.
    CHECK(json["heads"].empty());
}

TEST_CASE("analyze: a GPT-2 checkpoint's importance is the KL divergence of its prediction") {
    const TempDir dir;
    const auto json = analyze_json(
        {"--model", checkpoints + "/gpt2_tiny", "--text", "hello world, hello world", "--importance", "--metrics"},
        dir);
    CHECK(json["importance"]["measure"] == "kl_divergence");
    const auto& heads = json["importance"]["heads"];
    REQUIRE(heads.size() == json["heads"].size());
    for (const auto& h : heads) CHECK(h["effect"].get<double>() >= 0.0);
}

TEST_CASE("analyze: bad requests are refused in one line and write nothing") {
    const TempDir dir;
    const std::string csv = dir.file("x.csv");
    check_bad_input(run_cli({"analyze", "--model", "builtin:toy-text", "--text", "a b", "--rollout", "--out", csv}),
                    ".json");
    CHECK_FALSE(std::filesystem::exists(csv));
    check_bad_input(run_cli({"analyze", "--model", "builtin:toy-text", "--text", "a b", "--out", dir.file("x.txt")}),
                    "ending in .json or .csv");
    check_bad_input(
        run_cli({"analyze", "--model", "builtin:toy-text", "--text", "a b", "--out", dir.file("no/such/x.json")}),
        "does not exist");
    check_bad_input(run_cli({"analyze", "--model", "builtin:toy-text", "--text", "a b", "--rollout", "--discard-ratio",
                             "1", "--out", dir.file("x.json")}),
                    "discard");
    check_bad_input(run_cli({"analyze", "--model", "builtin:toy-text", "--text", "a b", "--rollout", "--start-layer",
                             "5", "--out", dir.file("x.json")}),
                    "layer");
    check_bad_input(run_cli({"analyze", "--model", "builtin:toy-text", "--text", "", "--out", dir.file("x.json")}),
                    "empty");
    CHECK_FALSE(std::filesystem::exists(dir.file("x.json")));
}
