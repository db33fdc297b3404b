// Every Hugging Face family through headscope-cli: `dump` of each golden case of the
// committed tiny checkpoints (tools/make_<family>_checkpoints.py write both) against
// PyTorch, every layer's attention and the logits within the manifest's tolerance, with
// the shapes, tensor names and token labels docs/cli.md promises. One test over the
// families; each row adds what its family guarantees beyond that (GPT-2's causal upper
// triangle, BERT's token types, ViT's patch labels).

#include "cli/cli_runner.h"
#include "core/base/file_bytes.h"
#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace headscope;
using namespace headscope::test;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;
const std::string checkpoints = source_dir + "/tests/checkpoints";

// What one case gave: its tensors and the reference's, and its sizes.
struct Dumped {
    const nlohmann::json& c;
    const SafetensorsFile& ours;
    const SafetensorsFile& expected;
    std::int64_t H = 0;
    std::int64_t T = 0;
    double tolerance = 0.0;
};

struct Family {
    const char* golden;   // tests/golden/<golden>/
    const char* script;   // tools/<script>, which writes the checkpoints and the goldens
    int n_cases;          // a case dropped by mistake fails here
    // Every layer's map [H, T, T], as checked against the reference.
    std::function<void(const Dumped&, const std::vector<float>& attention)> check_layer;
    // The logits and the labels.
    std::function<void(const Dumped&)> check_rest;
};

// An image case's dump (own resolution: the picture's own patch grid).
SafetensorsFile dump_image_case(const nlohmann::json& c, const std::string& out) {
    std::vector<std::string> args = {"dump",
                                     "--model",
                                     checkpoints + "/" + c.at("checkpoint").get<std::string>(),
                                     "--image",
                                     source_dir + "/" + c.at("image").get<std::string>(),
                                     "--out",
                                     out};
    if (c.value("own_resolution", false)) args.push_back("--own-resolution");
    const RunResult r = run_cli(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    return SafetensorsFile::open(out);
}

// Every query row's weights on later keys are exactly 0.
void check_causal(const std::vector<float>& w, std::int64_t H, std::int64_t T) {
    for (std::int64_t h = 0; h < H; ++h) {
        for (std::int64_t i = 0; i < T; ++i) {
            for (std::int64_t j = i + 1; j < T; ++j) REQUIRE(w[static_cast<std::size_t>((h * T + i) * T + j)] == 0.0f);
        }
    }
}

// Head 0's weight above the diagonal: well above 0 for a model that is not causal.
double above_diagonal(const std::vector<float>& w, std::int64_t T) {
    double above = 0.0;
    for (std::int64_t i = 0; i < T; ++i) {
        for (std::int64_t j = i + 1; j < T; ++j) above += w[static_cast<std::size_t>(i * T + j)];
    }
    return above;
}

void check_gpt2_rest(const Dumped& d) {
    check_close(d.ours, d.expected, "logits", {d.T, d.c.at("vocab").get<std::int64_t>()}, d.tolerance);
    const auto ids = d.c.at("ids").get<std::vector<std::int64_t>>();
    CHECK(int64s(d.ours, "input_ids") == ids);
    CHECK(int64s(d.expected, "input_ids") == ids);
    // Labels as a person reads them ("Ġthe" as " the"); null where the reference does not
    // spell the token out (bytes that are not printable ASCII).
    const auto tokens = tokens_of(d.ours);
    REQUIRE(static_cast<std::int64_t>(tokens.size()) == d.T);
    const auto& labels = d.c.at("labels");
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        if (!labels[t].is_null()) CHECK(tokens[t] == labels[t].get<std::string>());
    }
}

void check_bert_rest(const Dumped& d) {
    CHECK(d.ours.metadata().at("causal") == "off");
    // [T, V] for the masked-LM head, [labels] for the classifier, none for BertModel.
    if (d.c.at("logits").is_null()) {
        CHECK_FALSE(d.ours.contains("logits"));
    } else {
        check_close(d.ours, d.expected, "logits", d.c.at("logits").get<Shape>(), d.tolerance);
    }
    const auto ids = d.c.at("ids").get<std::vector<std::int64_t>>();
    CHECK(int64s(d.ours, "input_ids") == ids);
    CHECK(int64s(d.expected, "input_ids") == ids);
    // The types the attention was computed with (a pair: 0 ... 0 1 ... 1).
    CHECK(int64s(d.expected, "token_type_ids") == d.c.at("type_ids").get<std::vector<std::int64_t>>());
    CHECK(tokens_of(d.ours) == d.c.at("labels").get<std::vector<std::string>>());
}

// An image model's dump: no ids, and its logits [num_labels] (docs/cli.md) where it has a
// classifier, none where it has not.
void check_image_logits(const Dumped& d) {
    CHECK_FALSE(d.ours.contains("input_ids"));
    const auto labels = d.c.at("labels").get<std::vector<std::string>>();
    if (labels.empty()) {
        CHECK_FALSE(d.ours.contains("logits"));
    } else {
        check_close(d.ours, d.expected, "logits", {static_cast<std::int64_t>(labels.size())}, d.tolerance);
    }
}

void check_vit_rest(const Dumped& d) {
    check_image_logits(d);
    // Token labels: [CLS], DeiT's [DIST], then p0 .. p(N-1).
    const auto tokens = tokens_of(d.ours);
    REQUIRE(static_cast<std::int64_t>(tokens.size()) == d.T);
    const bool deit = d.c.at("checkpoint").get<std::string>().rfind("deit", 0) == 0;
    CHECK(tokens[0] == "[CLS]");
    if (deit) CHECK(tokens[1] == "[DIST]");
    CHECK(tokens[deit ? 2 : 1] == "p0");
    std::string last = "p";   // built in two steps: GCC 12 mis-warns on "p" + std::string
    last += std::to_string(d.T - (deit ? 3 : 2));
    CHECK(tokens.back() == last);
}

// DINOv2 (tools/make_vision_checkpoints.py): the classifier's logits, and the tokens
// [CLS], the registers [REG0] .. (after it, before the patches), p0 .. p(N-1) over the
// picture's own grid where it ran at its own resolution.
void check_dinov2_rest(const Dumped& d) {
    check_image_logits(d);
    const auto tokens = tokens_of(d.ours);
    REQUIRE(static_cast<std::int64_t>(tokens.size()) == d.T);
    const auto R = d.c.at("registers").get<std::int64_t>();
    const auto grid = d.c.at("grid").get<std::vector<std::int64_t>>();
    REQUIRE(d.T == 1 + R + grid[0] * grid[1]);
    CHECK(tokens[0] == "[CLS]");
    for (std::int64_t r = 0; r < R; ++r)
        CHECK(tokens[static_cast<std::size_t>(1 + r)] == "[REG" + std::to_string(r) + "]");
    CHECK(tokens[static_cast<std::size_t>(1 + R)] == "p0");
    std::string last = "p";   // built in two steps: GCC 12 mis-warns on "p" + std::string
    last += std::to_string(grid[0] * grid[1] - 1);
    CHECK(tokens.back() == last);
}

// The decoder families (tools/make_decoder_checkpoints.py): logits within the tolerance
// times their largest magnitude (at least 1), the ids as given or as Hugging Face's
// tokenizers library gave them, causal.
void check_decoder_rest(const Dumped& d) {
    const std::vector<float> expected = d.expected.get("logits").to_floats();
    float largest = 1.0f;
    for (const float v : expected) largest = std::max(largest, std::abs(v));
    check_close(d.ours, d.expected, "logits", {d.T, d.c.at("vocab").get<std::int64_t>()}, d.tolerance * largest);
    const auto ids = d.c.at("ids").get<std::vector<std::int64_t>>();
    CHECK(int64s(d.ours, "input_ids") == ids);
    CHECK(int64s(d.expected, "input_ids") == ids);
    CHECK(d.ours.metadata().at("causal") == "on");
    CHECK(static_cast<std::int64_t>(tokens_of(d.ours).size()) == d.T);
}

const Family families[] = {
    {"gpt2", "make_gpt2_checkpoints.py", 4,   // F32 (ids, text), F16, BF16
     [](const Dumped& d, const std::vector<float>& a) { check_causal(a, d.H, d.T); }, check_gpt2_rest},
    // F32 text, pair, tokens; BF16 text; the classifier's pair in F32 and F16. One tolerance
    // for F32 and 16-bit weights alike: both sides compute in float32 from the same stored
    // values (the reference upcasts them, as from_pretrained does).
    {"bert", "make_bert_checkpoints.py", 6,
     [](const Dumped& d, const std::vector<float>& a) {
         check_rows_sum_to_one(a, d.T);
         CHECK(above_diagonal(a, d.T) > 0.1);   // not causal
     },
     check_bert_rest},
    {"checkpoints", "make_vit_checkpoints.py", 12,
     [](const Dumped& d, const std::vector<float>& a) { check_rows_sum_to_one(a, d.T); }, check_vit_rest},
    // DINOv2 (F32; SwiGLU in BF16 shards with a classifier) and with registers (F32 with a
    // classifier, F16 without), processed and at their own resolution.
    {"vision", "make_vision_checkpoints.py", 12,
     [](const Dumped& d, const std::vector<float>& a) {
         check_rows_sum_to_one(a, d.T);
         CHECK(above_diagonal(a, d.T) > 0.1);   // not causal
     },
     check_dinov2_rest},
    // Llama (llama3, linear, yarn, dynamic RoPE), Mistral (sharded, windowed), Qwen 2 and 3,
    // Gemma 1-3, Phi-3 (LongRoPE short and long), Pythia: ids and text cases.
    {"decoders", "make_decoder_checkpoints.py", 26,
     [](const Dumped& d, const std::vector<float>& a) {
         check_causal(a, d.H, d.T);
         check_rows_sum_to_one(a, d.T);
     },
     check_decoder_rest},
};

}   // namespace

TEST_CASE("hf families: dump gives every layer's attention and the logits of PyTorch within 1e-4") {
    int n_pairs = 0;
    for (const Family& family : families) {
        CAPTURE(family.golden);
        const auto manifest = read_manifest(family.golden, family.script);
        const double tolerance = manifest.at("tolerance").get<double>();
        TempDir dir;
        int n_cases = 0;
        for (const auto& c : manifest.at("cases")) {
            const std::string name = c.at("name");
            CAPTURE(name);
            const std::string out = dir.file(name + ".safetensors");
            const SafetensorsFile ours = c.contains("image") ? dump_image_case(c, out) : dump_case(c, checkpoints, out);
            std::string golden = golden_dir();   // in steps: GCC 12 mis-warns (-Warray-bounds) on one sum
            golden.append("/").append(family.golden).append("/").append(name).append(".safetensors");
            const auto expected = SafetensorsFile::open(golden);
            const Dumped d{
                c, ours, expected, c.at("heads").get<std::int64_t>(), c.at("tokens").get<std::int64_t>(), tolerance};
            const auto L = c.at("layers").get<std::int64_t>();
            for (std::int64_t l = 0; l < L; ++l) {
                family.check_layer(
                    d, check_close(ours, expected, "attn." + std::to_string(l), {d.H, d.T, d.T}, tolerance));
            }
            CHECK_FALSE(ours.contains("attn." + std::to_string(L)));
            family.check_rest(d);
            if (c.contains("type_ids")) {
                const auto types = c.at("type_ids").get<std::vector<std::int64_t>>();
                n_pairs += std::count(types.begin(), types.end(), 1) > 0 ? 1 : 0;
            }
            ++n_cases;
        }
        CHECK(n_cases == family.n_cases);
    }
    CHECK(n_pairs == 3);   // bert_tiny.pair, bert_tiny_cls.pair and its F16 twin
}

TEST_CASE("hf families: render and analyze take DINOv2 with and without registers, the registers named") {
    // Not a structured binding: clang (the sanitizer build) cannot capture one in CAPTURE's lambda.
    for (const auto& checkpoint : {std::pair{"dinov2_tiny", 0}, std::pair{"dinov2_reg_tiny", 4}}) {
        const std::string name = checkpoint.first;
        const int registers = checkpoint.second;
        CAPTURE(name);
        TempDir dir;
        const std::string model = checkpoints + "/" + name;
        const std::string image = source_dir + "/tests/images/rgb.png";
        for (const char* view : {"matrix", "overlay", "grid"}) {
            const RunResult r = run_cli({"render", "--model", model, "--image", image, "--view", view, "--out",
                                         dir.file(view + std::string(".png"))});
            INFO("stderr: " << r.err);
            CHECK(r.exit_code == 0);
        }
        const RunResult a = run_cli({"analyze", "--model", model, "--image", image, "--out", dir.file("a.json")});
        INFO("stderr: " << a.err);
        REQUIRE(a.exit_code == 0);
        const auto report = nlohmann::json::parse(read_file_bytes(dir.file("a.json"), 1 << 20, "the report"));
        const auto tokens = report.at("tokens").get<std::vector<std::string>>();
        REQUIRE(tokens.size() == static_cast<std::size_t>(1 + registers + 16));   // 28 px: 4 x 4 patches of 7
        CHECK(tokens[0] == "[CLS]");
        for (int r = 0; r < registers; ++r)
            CHECK(tokens[static_cast<std::size_t>(1 + r)] == "[REG" + std::to_string(r) + "]");
        CHECK(tokens[static_cast<std::size_t>(1 + registers)] == "p0");
        CHECK(report.at("heads_per_layer") == 2);
    }
}
