// The encoder-decoder families (T5, Flan-T5, BART) through headscope-cli: `dump` of each
// golden case of the committed tiny checkpoints (tools/make_seq2seq_checkpoints.py writes
// both) against PyTorch: every layer's encoder, decoder and cross-attention maps and the
// logits within the manifest's tolerance, with disabled heads of each kind, BART's text and
// target through its tokenizer (the target shifted right after the start token); greedy
// generation gives the reference's tokens; and the flags' refusals.

#include "cli/cli_runner.h"
#include "core/base/file_bytes.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints";

// "L.H,L.H" of a case's {"layer": [heads]}.
std::string layer_heads(const nlohmann::json& disabled) {
    std::string list;
    for (const auto& [layer, heads] : disabled.items()) {
        for (const auto& h : heads)
            list.append(list.empty() ? "" : ",").append(layer + "." + std::to_string(h.get<int>()));
    }
    return list;
}

// The case's flags: its text and target text through the folder's tokenizer, or its ids.
std::vector<std::string> case_args(const nlohmann::json& c) {
    std::vector<std::string> args =
        c.contains("text")
            ? std::vector<std::string>{"--text", c.at("text").get<std::string>(), "--target",
                                       c.at("target_text").get<std::string>()}
            : std::vector<std::string>{"--tokens", joined_ids(c.at("source").get<std::vector<std::int64_t>>()),
                                       "--target-tokens", joined_ids(c.at("target").get<std::vector<std::int64_t>>())};
    const auto& disabled = c.at("disabled");
    for (const auto& [kind, flag] :
         {std::pair{"decoder", "--disable-heads"}, std::pair{"encoder", "--disable-encoder-heads"},
          std::pair{"cross", "--disable-cross-heads"}}) {
        if (disabled.contains(kind)) {
            args.push_back(flag);
            args.push_back(layer_heads(disabled.at(kind)));
        }
    }
    return args;
}

// Each query row of a map [H, Tq, Tk] sums to 1.
void check_rows(const std::vector<float>& w, std::int64_t rows, std::int64_t cols) {
    for (std::size_t r = 0; r < w.size() / static_cast<std::size_t>(cols); ++r) {
        double sum = 0.0;
        for (std::int64_t j = 0; j < cols; ++j)
            sum += w[r * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)];
        REQUIRE(std::abs(sum - 1.0) < 1e-4);
    }
    CHECK(w.size() % static_cast<std::size_t>(rows * cols) == 0);
}

// A PNG's width and height, from its IHDR chunk.
std::pair<int, int> png_size(const std::string& path) {
    const std::string bytes = read_file_bytes(path, 1 << 24, "the picture");
    REQUIRE(bytes.size() > 24);
    REQUIRE(bytes.compare(1, 3, "PNG") == 0);
    const auto be32 = [&](std::size_t at) {
        int v = 0;
        for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
        return v;
    };
    return {be32(16), be32(20)};
}

}   // namespace

TEST_CASE("seq2seq: dump gives the encoder, decoder and cross-attention maps and logits of PyTorch") {
    const auto manifest = read_manifest("seq2seq", "make_seq2seq_checkpoints.py");
    const double tolerance = manifest.at("tolerance").get<double>();
    TempDir dir;
    int n_cases = 0;
    int n_disabled = 0;
    for (const auto& c : manifest.at("cases")) {
        const std::string name = c.at("name");
        CAPTURE(name);
        const std::string out = dir.file(name + ".safetensors");
        const RunResult r = run_dump(checkpoints + "/" + c.at("checkpoint").get<std::string>(), case_args(c), out);
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.err.empty());
        const SafetensorsFile ours = SafetensorsFile::open(out);
        const SafetensorsFile expected = SafetensorsFile::open(golden_dir() + "/seq2seq/" + name + ".safetensors");
        const auto H = c.at("heads").get<std::int64_t>();
        const auto source = c.at("source").get<std::vector<std::int64_t>>();
        const auto target = c.at("target").get<std::vector<std::int64_t>>();
        const auto Ts = static_cast<std::int64_t>(source.size());
        const auto Tt = static_cast<std::int64_t>(target.size());
        const auto Ls = c.at("encoder_layers").get<std::int64_t>();
        const auto Lt = c.at("decoder_layers").get<std::int64_t>();
        for (std::int64_t l = 0; l < Ls; ++l) {
            check_rows(check_close(ours, expected, "encoder.attn." + std::to_string(l), {H, Ts, Ts}, tolerance), Ts,
                       Ts);
        }
        for (std::int64_t l = 0; l < Lt; ++l) {
            const auto self = check_close(ours, expected, "decoder.attn." + std::to_string(l), {H, Tt, Tt}, tolerance);
            check_rows(self, Tt, Tt);
            for (std::int64_t h = 0; h < H; ++h) {   // causal: nothing above the diagonal
                for (std::int64_t i = 0; i < Tt; ++i) {
                    for (std::int64_t j = i + 1; j < Tt; ++j)
                        REQUIRE(self[static_cast<std::size_t>((h * Tt + i) * Tt + j)] == 0.0f);
                }
            }
            check_rows(check_close(ours, expected, "cross.attn." + std::to_string(l), {H, Tt, Ts}, tolerance), Tt, Ts);
        }
        CHECK_FALSE(ours.contains("encoder.attn." + std::to_string(Ls)));
        CHECK_FALSE(ours.contains("cross.attn." + std::to_string(Lt)));
        CHECK_FALSE(ours.contains("attn.0"));
        // Logits within the tolerance times their largest magnitude (at least 1).
        float largest = 1.0f;
        for (const float v : expected.get("logits").to_floats()) largest = std::max(largest, std::abs(v));
        check_close(ours, expected, "logits", {Tt, c.at("vocab").get<std::int64_t>()}, tolerance * largest);
        CHECK(int64s(ours, "input_ids") == source);
        CHECK(int64s(ours, "decoder_input_ids") == target);
        CHECK(tokens_of(ours).size() == target.size());
        CHECK(nlohmann::json::parse(ours.metadata().at("source_tokens")).size() == source.size());
        n_disabled += c.at("disabled").empty() ? 0 : 1;
        ++n_cases;
    }
    CHECK(n_cases == 8);
    CHECK(n_disabled == 2);
}

TEST_CASE("seq2seq: --generate gives the reference's greedy tokens") {
    const auto manifest = read_manifest("seq2seq", "make_seq2seq_checkpoints.py");
    TempDir dir;
    int n_generated = 0;
    for (const auto& c : manifest.at("cases")) {
        if (!c.contains("generated")) continue;
        const std::string name = c.at("name");
        CAPTURE(name);
        const std::string out = dir.file(name + ".safetensors");
        const RunResult r = run_dump(checkpoints + "/" + c.at("checkpoint").get<std::string>(),
                                     {"--tokens", joined_ids(c.at("source").get<std::vector<std::int64_t>>()),
                                      "--generate", std::to_string(c.at("generate").get<int>())},
                                     out);
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        const SafetensorsFile ours = SafetensorsFile::open(out);
        CHECK(int64s(ours, "decoder_input_ids") == c.at("generated").get<std::vector<std::int64_t>>());
        ++n_generated;
    }
    CHECK(n_generated == 3);
}

TEST_CASE("seq2seq: the decoder alone reads its start token, and the flags refuse what does not fit") {
    TempDir dir;
    const std::string t5 = checkpoints + "/t5_tiny";
    const std::string out = dir.file("start.safetensors");
    const RunResult start = run_dump(t5, {"--tokens", "5,6,7"}, out);
    INFO("stderr: " << start.err);
    REQUIRE(start.exit_code == 0);
    const SafetensorsFile file = SafetensorsFile::open(out);
    CHECK(int64s(file, "decoder_input_ids") == std::vector<std::int64_t>{0});   // decoder_start_token_id
    CHECK(file.get("cross.attn.1").shape == Shape{4, 1, 3});

    const auto refused = [&](const std::vector<std::string>& args, const std::string& expected) {
        CAPTURE(expected);
        const RunResult r = run_dump(t5, args, dir.file("refused.safetensors"));
        CHECK(r.exit_code != 0);
        CHECK(r.err.find(expected) != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    };
    refused({"--tokens", "5,6", "--target-tokens", "0,96"}, "--target-tokens: ");
    refused({"--tokens", "5,6", "--disable-cross-heads", "2.0"}, "--disable-cross-heads: 2.0 does not exist");
    refused({"--tokens", "5,6", "--disable-encoder-heads", "0.4"}, "--disable-encoder-heads: 0.4 does not exist");
    refused({"--tokens", "5,6", "--target", ""}, "--target: the text is empty");
    refused({"--tokens", "5,6", "--target", "hello"}, "no tokenizer read");
    const RunResult gpt2 =
        run_dump(checkpoints + "/gpt2_tiny", {"--tokens", "5,6", "--generate", "3"}, dir.file("gpt2.safetensors"));
    CHECK(gpt2.exit_code != 0);
    CHECK(gpt2.err.find("--generate: ") != std::string::npos);
    CHECK(gpt2.err.find("is not an encoder-decoder model") != std::string::npos);
    const RunResult cross = run_dump(checkpoints + "/gpt2_tiny", {"--tokens", "5,6", "--disable-cross-heads", "0.0"},
                                     dir.file("gpt2.safetensors"));
    CHECK(cross.exit_code != 0);
    CHECK(cross.err.find("--disable-cross-heads: ") != std::string::npos);
}

TEST_CASE("seq2seq: render --kind draws the encoder's [Ts, Ts], the decoder's [Tt, Tt] and the cross [Tt, Ts] maps") {
    TempDir dir;
    // 30 source tokens, 3 target tokens: each kind's picture has its own rows and columns.
    std::vector<std::int64_t> source;
    for (int i = 0; i < 30; ++i) source.push_back(4 + (i * 7) % 80);
    std::map<std::string, std::pair<int, int>> sizes;
    for (const char* kind : {"encoder", "decoder", "cross"}) {
        CAPTURE(kind);
        const std::string out = dir.file(std::string(kind) + ".png");
        const RunResult r =
            run_cli({"render", "--model", checkpoints + "/t5_tiny", "--tokens", joined_ids(source), "--target-tokens",
                     "0,5,9", "--kind", kind, "--layer", "1", "--head", "2", "--out", out});
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        sizes[kind] = png_size(out);
    }
    // 30 rows of cells against 3: the encoder's picture is taller than the cross, which is no
    // taller than the decoder's (their 3 rows; the cross's column labels are the source's);
    // 30 columns against 3: the cross is wider than the decoder's.
    CHECK(sizes["encoder"].second > sizes["cross"].second + 100);
    CHECK(sizes["cross"].first > sizes["decoder"].first + 100);
    const RunResult grid =
        run_cli({"render", "--model", checkpoints + "/bart_tiny", "--tokens", "0,31,47,2", "--generate", "3", "--kind",
                 "cross", "--view", "grid", "--out", dir.file("grid.png")});
    INFO("stderr: " << grid.err);
    CHECK(grid.exit_code == 0);
    const RunResult analyze = run_cli({"analyze", "--model", checkpoints + "/t5_tiny", "--tokens", "5,6,7",
                                       "--target-tokens", "0,5", "--out", dir.file("a.json")});
    INFO("stderr: " << analyze.err);
    CHECK(analyze.exit_code == 0);

    const RunResult gpt2 = run_cli({"render", "--model", checkpoints + "/gpt2_tiny", "--tokens", "5,6", "--kind",
                                    "cross", "--out", dir.file("g.png")});
    CHECK(gpt2.exit_code != 0);
    CHECK(gpt2.err.find("--kind cross: ") != std::string::npos);
    const RunResult layer = run_cli({"render", "--model", checkpoints + "/flan_t5_tiny", "--tokens", "5,6", "--kind",
                                     "encoder", "--layer", "2", "--out", dir.file("l.png")});
    CHECK(layer.exit_code != 0);
    CHECK(layer.err.find("--layer 2: ") != std::string::npos);
    CHECK(layer.err.find("has encoder layers 0..1") != std::string::npos);
}

TEST_CASE("seq2seq: analyze --kind measures the encoder's and the cross-attention's heads, monotonicity from "
          "PyTorch's maps") {
    const auto manifest = read_manifest("seq2seq", "make_seq2seq_checkpoints.py");
    const auto c = *std::find_if(manifest.at("cases").begin(), manifest.at("cases").end(),
                                 [](const nlohmann::json& one) { return one.at("name") == "t5_tiny_long"; });
    const auto source = c.at("source").get<std::vector<std::int64_t>>();
    const auto target = c.at("target").get<std::vector<std::int64_t>>();
    const auto H = c.at("heads").get<std::int64_t>();
    const auto Ts = static_cast<std::int64_t>(source.size());
    const auto Tt = static_cast<std::int64_t>(target.size());
    TempDir dir;
    const auto analyze = [&](const std::string& kind, const std::string& out, std::vector<std::string> more = {}) {
        std::vector<std::string> args = {"analyze",
                                         "--model",
                                         checkpoints + "/t5_tiny",
                                         "--tokens",
                                         joined_ids(source),
                                         "--target-tokens",
                                         joined_ids(target),
                                         "--kind",
                                         kind,
                                         "--out",
                                         dir.file(out)};
        args.insert(args.end(), more.begin(), more.end());
        return run_cli(args);
    };
    const RunResult cross = analyze("cross", "cross.json");
    INFO("stderr: " << cross.err);
    REQUIRE(cross.exit_code == 0);
    const nlohmann::json report = nlohmann::json::parse(read_bytes(dir.file("cross.json")));
    CHECK(report.at("tokens").size() == target.size());   // the rows: the target's
    REQUIRE(report.at("heads").size() == static_cast<std::size_t>(2 * H));
    // Each head's share of forward steps, worked here from the reference's maps.
    const SafetensorsFile expected = SafetensorsFile::open(golden_dir() + "/seq2seq/t5_tiny_long.safetensors");
    for (std::int64_t l = 0; l < 2; ++l) {
        const std::vector<float> maps = expected.get("cross.attn." + std::to_string(l)).to_floats();
        for (std::int64_t h = 0; h < H; ++h) {
            CAPTURE(l);
            CAPTURE(h);
            int forward = 0;
            double last = 0.0;
            for (std::int64_t i = 0; i < Tt; ++i) {
                double centre = 0.0;
                for (std::int64_t j = 0; j < Ts; ++j)
                    centre += static_cast<double>(j) * maps[static_cast<std::size_t>((h * Tt + i) * Ts + j)];
                if (i > 0 && centre >= last) ++forward;
                last = centre;
            }
            const nlohmann::json& head = report.at("heads").at(static_cast<std::size_t>(l * H + h));
            CHECK(head.at("monotonicity").get<double>() == doctest::Approx(forward / double(Tt - 1)));
            CHECK(head.at("diag").is_null());   // no position metric across two sequences
            CHECK(head.at("entropy").get<double>() > 0.0);
        }
    }
    const RunResult encoder = analyze("encoder", "encoder.csv");
    INFO("stderr: " << encoder.err);
    REQUIRE(encoder.exit_code == 0);
    const std::string csv = read_bytes(dir.file("encoder.csv"));
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * H);
    CHECK(csv.find(",monotonicity\n") != std::string::npos);
    CHECK(encoder.out.find(std::to_string(Ts) + " tokens") != std::string::npos);   // the source's

    const RunResult rollout = analyze("cross", "r.json", {"--rollout"});
    CHECK(rollout.exit_code != 0);
    CHECK(rollout.err.find("--rollout --kind cross: rollout multiplies self-attention") != std::string::npos);
    const RunResult importance = analyze("encoder", "i.json", {"--importance"});
    CHECK(importance.exit_code != 0);
    CHECK(importance.err.find("--importance --kind encoder: the scan switches off the decoder's own heads") !=
          std::string::npos);
    const RunResult gpt2 = run_cli({"analyze", "--model", checkpoints + "/gpt2_tiny", "--tokens", "5,6", "--kind",
                                    "encoder", "--out", dir.file("g.json")});
    CHECK(gpt2.exit_code != 0);
    CHECK(gpt2.err.find("--kind encoder: ") != std::string::npos);
    CHECK(gpt2.err.find("has no encoder") != std::string::npos);
}
