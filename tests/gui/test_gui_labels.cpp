// The labels the views draw straight onto the screen (the Model grid's heads and layers,
// the names of the Similarity view's dots, the importance map's axes), and the
// predictions panel's lines, read from what the frame drew: the window's test build
// (headscope-test-window --drawn-text) lists every text of the screenshot's frame and
// where it lies (tests/gui/harness/drawn_text.h).

#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using headscope::test::TempDir;

namespace {

struct Drawn {
    float x = 0.0f;
    float y = 0.0f;
    std::string text;
};

std::vector<Drawn> read_drawn(const std::string& path) {
    std::vector<Drawn> drawn;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t tab = line.find('\t');
        REQUIRE_MESSAGE(tab != std::string::npos, "a line the harness should not write: " << line);
        Drawn d;
        std::istringstream at(line.substr(0, tab));
        at >> d.x >> d.y;
        REQUIRE_MESSAGE(at, "a line the harness should not write: " << line);
        d.text = line.substr(tab + 1);
        drawn.push_back(d);
    }
    return drawn;
}

// The frame's text once the first result is drawn, with `args` (and a session file's
// text, when given, opened with --session).
std::vector<Drawn> drawn_text(const std::string& args, const std::string& session = "",
                              const std::string& size = "1280x800") {
    TempDir dir;
    std::string session_flag;
    if (!session.empty()) {
        headscope::test::write_bytes(dir.file("session.json"), session);
        session_flag = " --session '" + dir.file("session.json") + "'";
    }
    const std::string text_file = dir.file("drawn.tsv");
    const std::string command = "XDG_CONFIG_HOME='" + dir.path().string() + "' " +
                                headscope::test::xvfb_run_prefix(dir, size == "1280x800" ? "1280x800" : "2100x1400") +
                                "'" HEADSCOPE_TEST_WINDOW "'" + (session.empty() ? " --fresh" : "") + " --size " +
                                size + " --screenshot '" + dir.file("shot.png") + "' --drawn-text '" + text_file +
                                "' " + args + session_flag + " 2>'" + dir.file("err") + "' </dev/null";
    INFO(args);
    REQUIRE(headscope::test::run_command(command, dir.file("err")) == 0);
    return read_drawn(text_file);
}

// Each of `texts` as last drawn in the frame (the map beside a table or an axis that
// uses the same words is drawn after them), in the order asked; a failed check names
// each one not drawn.
std::vector<Drawn> find_each(const std::vector<Drawn>& drawn, const std::vector<std::string>& texts) {
    std::vector<Drawn> found;
    for (const std::string& text : texts) {
        const auto it = std::find_if(drawn.rbegin(), drawn.rend(), [&](const Drawn& d) { return d.text == text; });
        CHECK_MESSAGE(it != drawn.rend(), "not drawn: " << text);
        if (it != drawn.rend()) found.push_back(*it);
    }
    return found;
}

bool drawn_containing(const std::vector<Drawn>& drawn, const std::string& part) {
    return std::any_of(drawn.begin(), drawn.end(),
                       [&](const Drawn& d) { return d.text.find(part) != std::string::npos; });
}

// xdotool pressing the left button at (x, y) of the window $w (window pixels, as drawn_text gives them).
std::string click_at(float x, float y) {
    return "xdotool mousemove --window \\$w " + std::to_string(static_cast<int>(x)) + " " +
           std::to_string(static_cast<int>(y)) +
           "; sleep 0.3; xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; "
           "sleep 0.5; ";
}

// The test window launched with `args`, `actions` (xdotool, $w the window) done 5 s after
// it appears, and the text of its frame 11 s after the start.
std::vector<Drawn> drawn_after(const std::string& args, const std::string& actions) {
    TempDir dir;
    const std::string text_file = dir.file("drawn.tsv");
    const std::string launch = "'" HEADSCOPE_TEST_WINDOW "' --fresh --size 1280x800 " + args +
                               " --screenshot-after 11 --screenshot '" + dir.file("shot.png") + "' --drawn-text '" +
                               text_file + "' 2>'" + dir.file("err") + "'";
    const std::string script = launch +
                               " & pid=\\$!; w=\\$(timeout 60 xdotool search --sync --name '^Headscope' | head -n 1); "
                               "[ -n \\\"\\$w\\\" ] || exit 3; sleep 5; timeout 30 xdotool windowfocus --sync \\$w; " +
                               actions + "wait \\$pid";
    const std::string command = "XDG_CONFIG_HOME='" + dir.path().string() + "' " +
                                headscope::test::xvfb_run_prefix(dir) + "bash -c \"" + script + "\" </dev/null";
    INFO(args);
    REQUIRE(headscope::test::run_command(command, dir.file("err")) == 0);
    return read_drawn(text_file);
}

}   // namespace

TEST_CASE("gui labels: the Model grid names its head columns H0..H3 left to right and its layer rows L0, L1") {
    const std::vector<Drawn> drawn = drawn_text("--view model");
    const std::vector<Drawn> heads = find_each(drawn, {"H0", "H1", "H2", "H3"});
    const std::vector<Drawn> layers = find_each(drawn, {"L0", "L1"});
    REQUIRE(heads.size() == 4);
    REQUIRE(layers.size() == 2);
    // One row of labels over the columns, evenly spaced (one thumbnail apart), left to right.
    const float step = heads[1].x - heads[0].x;
    CHECK(step > 50.0f);
    for (std::size_t h = 1; h < heads.size(); ++h) {
        CHECK(heads[h].y == doctest::Approx(heads[0].y));
        CHECK(heads[h].x - heads[h - 1].x == doctest::Approx(step).epsilon(0.02));
    }
    // The layer labels: one column left of the grid, layer 0 above layer 1, both under the heads' row.
    CHECK(layers[0].x == doctest::Approx(layers[1].x));
    CHECK(layers[0].x < heads[0].x);
    CHECK(layers[0].y > heads[0].y);
    CHECK(layers[1].y - layers[0].y > 50.0f);
}

TEST_CASE("gui labels: the Similarity view's map names each of its 8 heads' dots layer.head") {
    const std::vector<Drawn> drawn = drawn_text("--view similarity");
    const std::vector<Drawn> dots = find_each(drawn, {"0.0", "0.1", "0.2", "0.3", "1.0", "1.1", "1.2", "1.3"});
    REQUIRE(dots.size() == 8);
    // Where the 2-D map placed each head: neither a row nor a column of labels (the
    // matrix beside it names its rows and columns with the same words), nor one pile.
    std::vector<float> xs;
    std::vector<float> ys;
    for (const Drawn& d : dots) {
        xs.push_back(d.x);
        ys.push_back(d.y);
    }
    const auto spread = [](std::vector<float> v) {
        return *std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end());
    };
    CHECK(spread(xs) > 30.0f);
    CHECK(spread(ys) > 10.0f);
}

TEST_CASE("gui labels: the importance map labels its layers and heads, and its plot's axis") {
    const std::vector<Drawn> drawn = drawn_text("--view heads --scan-importance");
    const std::vector<Drawn> labels = find_each(drawn, {"L0", "L1", "H0", "H1", "H2", "H3"});
    REQUIRE(labels.size() == 6);
    CHECK(labels[0].x == doctest::Approx(labels[1].x));   // the layers down one side
    CHECK(labels[1].y > labels[0].y);
    for (std::size_t i = 3; i < labels.size(); ++i) {   // the heads along the top, in order
        CHECK(labels[i].y == doctest::Approx(labels[2].y));
        CHECK(labels[i].x > labels[i - 1].x);
    }
    CHECK(labels[2].y < labels[0].y);
}

TEST_CASE("gui labels: with a head off at 1024x640 the predictions panel keeps its KL line and all five rows, "
          "intact beside ablated") {
    const std::string session =
        R"({"headscope_session":1,"model":{"name":"builtin:tiny-story"},"disabled_heads":{"layers":2,"heads":4,)"
        R"("off":[[1,0]]},"layer":1,"head":0,"view":"matrix"})";
    const std::vector<Drawn> drawn = drawn_text("", session, "1024x640");
    CHECK(drawn_containing(drawn, "KL(intact || ablated) = "));
    CHECK(!drawn_containing(drawn, "measuring"));   // the numbers are in before the screenshot
    find_each(drawn, {"intact model", "vs intact"});
    // Five rows of percentages for each of the two tables (intact, ablated), the last
    // above the status bar.
    std::vector<float> rows;
    for (const Drawn& d : drawn) {
        if (d.text.size() >= 2 && d.text.back() == '%' &&
            d.text.find_first_not_of(" 0123456789.%") == std::string::npos)
            rows.push_back(d.y);
    }
    CHECK(rows.size() == 10);
    CHECK(!rows.empty());
    if (!rows.empty()) CHECK(*std::max_element(rows.begin(), rows.end()) < 640.0f - 30.0f);
}

TEST_CASE("gui labels: DINOv2's registers are a column of their own beside the picture, with the reference's weights") {
    const std::string checkpoint = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/dinov2_reg_tiny";
    const std::string image = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/images/rgb.png";
    const std::vector<Drawn> drawn =
        drawn_text("--model '" + checkpoint + "' --image '" + image + "' --view image --layer 0 --head 0");
    // [CLS]'s row of head 0.0 as PyTorch computed it (tools/make_vision_checkpoints.py):
    // [CLS], then the four registers, then the 16 patches.
    const auto golden =
        headscope::SafetensorsFile::open(headscope::test::golden_dir() + "/vision/dinov2_reg_tiny.rgb.safetensors");
    const std::vector<float> attention = golden.get("attn.0").to_floats();   // [H, 21, 21]
    std::vector<std::string> registers;
    double to_registers = 0.0;
    for (int r = 0; r < 4; ++r) {
        char text[32];
        std::snprintf(text, sizeof text, "[REG%d] %.3f", r, static_cast<double>(attention[1 + r]));
        registers.push_back(text);
        to_registers += attention[1 + r];
    }
    double to_patches = 0.0;
    for (int t = 5; t < 21; ++t) to_patches += attention[t];
    char shares[128];
    std::snprintf(shares, sizeof shares, "the registers take %.0f%% of its attention, [CLS] %.0f%%, the patches %.0f%%",
                  100.0 * to_registers, 100.0 * attention[0], 100.0 * to_patches);
    const std::vector<Drawn> column = find_each(drawn, registers);
    const std::vector<Drawn> above = find_each(
        drawn, {"attention from [CLS]  (click a patch to choose it)", "registers: [CLS]'s attention to each", shares});
    REQUIRE(column.size() == 4);
    REQUIRE(above.size() == 3);
    // One column, top to bottom, under its heading, right of the picture (whose caption is
    // at its left edge: the picture lies between them); the shares line under the column.
    for (std::size_t r = 1; r < column.size(); ++r) {
        CHECK(column[r].x == doctest::Approx(column[0].x));
        CHECK(column[r].y > column[r - 1].y);
    }
    CHECK(above[1].x - above[0].x > 200.0f);
    CHECK(column[0].y > above[1].y);
    CHECK(above[2].y > column.back().y);
}

namespace {

// A CLIP-shaped folder in `dir`: the committed tiny checkpoint (CLIP's whole vocabulary) and
// the real tokenizer (tools/fetch-tokenizers.sh).
std::string clip_folder(const TempDir& dir) {
    const std::string tokenizer = std::string(HEADSCOPE_TOKENIZERS_DIR) + "/models/clip";
    if (!std::filesystem::exists(tokenizer + "/tokenizer.json")) {
        FAIL("CLIP's tokenizer is not in " << tokenizer << ": run tools/fetch-tokenizers.sh");
    }
    const std::string model = dir.file("clip");
    std::filesystem::copy(std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/clip_tiny", model);
    for (const auto& file : std::filesystem::directory_iterator(tokenizer)) {
        std::filesystem::copy_file(file.path(), model + "/" + file.path().filename().string());
    }
    return model;
}

}   // namespace

TEST_CASE("gui labels: a label typed into CLIP's Labels box (Ctrl+L) is scored in the predictions panel (xdotool)") {
    TempDir dir;
    const std::string model = clip_folder(dir);
    // One label given at the start; the second typed at the end of the box once the first result is
    // on screen (5 s: under the sanitizers a loaded machine has taken more than 3 before the Labels
    // box was there, and the keys then went to the views); the screenshot's frame, 11 s after the
    // start, lists what it drew.
    const std::vector<Drawn> drawn = drawn_after(
        "--model '" + model + "' --image '" HEADSCOPE_SOURCE_DIR "/tests/images/rgb.png' --labels 'a photo of a cat'",
        "xdotool keydown ctrl keydown l; sleep 0.15; xdotool keyup l keyup ctrl; sleep 0.3; "
        "xdotool keydown ctrl keydown End; sleep 0.15; xdotool keyup End keyup ctrl; sleep 0.3; "
        "xdotool key Return; xdotool type --delay 60 'a diagram'; ");
    // The box holds both lines, and the panel names each label with its probability.
    CHECK(drawn_containing(drawn, "a photo of a cat\\na diagram"));
    const std::vector<Drawn> rows = find_each(drawn, {"Labels", "a photo of a cat", "a diagram"});
    REQUIRE(rows.size() == 3);
    CHECK(rows[1].y > rows[0].y);   // under the panel's heading
    CHECK(rows[2].y > rows[0].y);
    CHECK(std::count_if(drawn.begin(), drawn.end(), [](const Drawn& d) { return d.text.ends_with("%"); }) >= 2);
}

TEST_CASE("gui labels: --tower text shows a CLIP folder's text tower as a causal text model") {
    TempDir dir;
    const std::string model = clip_folder(dir);
    const std::vector<Drawn> drawn = drawn_text("--model '" + model + "' --tower text --text 'a photo of a cat'");
    CHECK(drawn_containing(drawn, "the text tower of"));
    find_each(drawn, {"text tower", "<|startoftext|>", "<|endoftext|>"});
    CHECK_FALSE(drawn_containing(drawn, "Labels, one per line"));   // a text model: the sentence box
}

TEST_CASE("gui labels: SigLIP's labels are each a sigmoid, with the reference's probabilities, and its pooling "
          "probe is drawn per head over the picture") {
    const std::string source = HEADSCOPE_SOURCE_DIR;
    const auto golden = headscope::SafetensorsFile::open(headscope::test::golden_dir() +
                                                         "/siglip/siglip_tiny_so400m_bf16.rgb.safetensors");
    const std::vector<float> probs = golden.get("probs").to_floats();   // each label's sigmoid, as PyTorch
    REQUIRE(probs.size() == 3);
    std::string session = R"({"headscope_session":1,"model":{"name":")";
    session += source + R"(/tests/checkpoints/siglip_tiny_so400m_bf16"},"image":")" + source +
               R"(/tests/images/rgb.png","labels":"17,300,1\n42,301,7,88,1\n5,99,250,13,480,64,511,1",)" +
               R"("labels_are_ids":true,"head":2,"view":"image","views":{"image":{"probe":true}}})";
    const std::vector<Drawn> drawn = drawn_text("", session);
    CHECK(drawn_containing(drawn, "each the sigmoid of exp(logit_scale) x cosine + logit_bias"));
    char likely[32];
    std::snprintf(likely, sizeof likely, "%5.1f%%", 100.0 * probs[2]);   // 0.56: a mid-range yes
    find_each(drawn, {"5,99,250,13,480,64,511,1", likely});
    // The two others are nearly no (4e-8 and 5e-23): shown as such, not as 0.0%.
    CHECK(!drawn_containing(drawn, "  0.0%"));
    find_each(drawn, {"<0.001%"});
    // The probe's map of head 2 over the picture, and a thumbnail per head beside it.
    find_each(drawn, {"the pooling probe's attention, head 2, over the last layer's output  (click a patch to choose "
                      "it)",
                      "the pooling probe, every head:", "probe"});
    CHECK(!drawn_containing(drawn, "[CLS]"));   // SigLIP has none
}

TEST_CASE("gui labels: Compare puts a label's text-tower map beside the image tower's, each with its own tokens") {
    const std::string source = HEADSCOPE_SOURCE_DIR;
    std::string session = R"({"headscope_session":1,"model":{"name":")";
    session += source + R"(/tests/checkpoints/siglip_tiny_so400m_bf16"},"image":")" + source +
               R"(/tests/images/rgb.png","labels":"17,300,1\n5,99,250,13,480,64,511,1","labels_are_ids":true,)" +
               R"("layer":1,"head":1,"view":"compare","views":{"compare":{"mode":"text_tower","b_label":1}}})";
    const std::vector<Drawn> drawn = drawn_text("", session);
    const std::vector<Drawn> titles = find_each(
        drawn, {"A: head 1.1 of the image tower", "B: head 1.1 of the text tower on \"5,99,250,13,480,64,511,1\"",
                "A is 16 x 16 and B 8 x 8 positions: side by side, no difference map"});
    REQUIRE(titles.size() == 3);
    CHECK(titles[1].x > titles[0].x);   // side by side, B right of A
    // Each map labelled with its own input's tokens: the patches, and the label's ids.
    find_each(drawn, {"p15", "480", "511"});
}

namespace {

// t5_tiny (tools/make_seq2seq_checkpoints.py) on a source of six ids and a target of four,
// its cross-attention shown: no id is both a source and a target token.
const std::string t5_cross =
    "--model '" HEADSCOPE_SOURCE_DIR "/tests/checkpoints/t5_tiny' --tokens 13,27,9,8,40,2 --target-tokens 0,5,6,7 "
    "--kind cross --view matrix --layer 1 --head 0";

}   // namespace

TEST_CASE("gui labels: T5's cross-attention is a target x source map, both axes labelled with their own tokens") {
    const std::vector<Drawn> drawn = drawn_text(t5_cross);
    find_each(drawn, {"Cross-attention head 1.0", "Attention:", "cross"});
    const std::vector<Drawn> keys = find_each(drawn, {"13", "27", "9", "8", "40", "2"});
    const std::vector<Drawn> queries = find_each(drawn, {"0", "5", "6", "7"});
    REQUIRE(keys.size() == 6);
    REQUIRE(queries.size() == 4);
    // The source along the top, left to right, one cell apart; the target down the left side.
    const float cell = keys[1].x - keys[0].x;
    CHECK(cell > 20.0f);
    for (std::size_t k = 1; k < keys.size(); ++k) {
        CHECK(keys[k].y == doctest::Approx(keys[0].y));
        CHECK(keys[k].x - keys[k - 1].x == doctest::Approx(cell).epsilon(0.05));
    }
    for (std::size_t q = 1; q < queries.size(); ++q) {
        CHECK(queries[q].x == doctest::Approx(queries[0].x).epsilon(0.05));
        CHECK(queries[q].y - queries[q - 1].y == doctest::Approx(cell).epsilon(0.05));
    }
    CHECK(queries[0].x < keys[0].x);
    CHECK(queries[0].y > keys[0].y);
    // Square cells: six columns and four rows make a map wider than tall.
    CHECK(keys.back().x - keys.front().x > 1.5f * (queries.back().y - queries.front().y));
    // The encoder's kind is the source over itself.
    std::string encoder_args = t5_cross;
    encoder_args.replace(encoder_args.find("--kind cross"), 12, "--kind encoder");
    const std::vector<Drawn> encoder = drawn_text(encoder_args);
    find_each(encoder,
              {"Encoder head 1.0", "the encoder: rows, columns: source tokens; click a row to pin it (wheel: zoom)"});
}

TEST_CASE("gui labels: T5's step slider pins a target row, and switching a cross head off moves the prediction "
          "(xdotool)") {
    // Where the slider and head 1's "disable" box lie, from a frame of the same launch.
    const std::vector<Drawn> before = drawn_text(t5_cross + " --query 0");
    find_each(before, {"step 0: 0", "Query 0 0 attends most to:"});
    const std::vector<Drawn> marks = find_each(before, {"Attention:", "Step"});
    REQUIRE(marks.size() == 2);
    std::vector<Drawn> boxes;
    for (const Drawn& d : before) {
        if (d.text == "disable") boxes.push_back(d);
    }
    REQUIRE(boxes.size() == 4);   // one per head, top to bottom
    std::sort(boxes.begin(), boxes.end(), [](const Drawn& a, const Drawn& b) { return a.y < b.y; });
    // The slider runs from the panel's left edge to its label: its right end is the last step.
    // The slider runs from the panel's left edge to its label: its right end is the last step.
    const float slider_x = marks[0].x + 0.97f * (marks[1].x - 8.0f - marks[0].x);
    const std::vector<Drawn> after = drawn_after(
        t5_cross + " --query 0", click_at(slider_x, marks[1].y + 8.0f) +
                                     click_at(boxes[1].x - 14.0f, boxes[1].y + 8.0f));   // the box left of its word
    // The last step pinned: its row named above the bars, and the prediction made there.
    find_each(after, {"step 3: 7", "Query 3 7 attends most to:", "Disabled (1): 1.1", "1 head disabled"});
    CHECK(drawn_containing(after, "Next token after \"7\" (position 3 of 4)"));
    CHECK(drawn_containing(after, "KL(intact || ablated) = "));
    // The ablated model's five lines beside the intact model's: some percentage moved.
    std::vector<std::string> percentages;
    for (const Drawn& d : after) {
        if (d.text.ends_with("%")) percentages.push_back(d.text);
    }
    REQUIRE(percentages.size() == 10);
    CHECK(!std::equal(percentages.begin(), percentages.begin() + 5, percentages.begin() + 5));
}

TEST_CASE("gui labels: BART's Generate decodes a target from the typed source, and the cross kind shows it (xdotool)") {
    const std::string bart =
        "--model '" HEADSCOPE_SOURCE_DIR "/tests/checkpoints/bart_tiny' --text 'the cat sat on the mat'";
    const std::vector<Drawn> before = drawn_text(bart);
    find_each(before, {"Source (the encoder's input)", "Target (the decoder's)", "Head 0.0"});
    CHECK(!drawn_containing(before, "Generated ("));
    const std::vector<Drawn> controls = find_each(before, {"cross", "Generate"});
    REQUIRE(controls.size() == 2);
    // The kind first: the generated line then pushes the radio buttons down.
    const std::vector<Drawn> after = drawn_after(bart, click_at(controls[0].x - 14.0f, controls[0].y + 8.0f) +
                                                           click_at(controls[1].x + 8.0f, controls[1].y + 6.0f));
    CHECK(drawn_containing(after, "Generated ("));
    find_each(after, {"Cross-attention head 0.0", "rows: target tokens, columns: source tokens; click a row to pin it "
                                                  "(wheel: zoom)"});
    // Its source tokens across the map (the byte-level BPE's, spaces as they are drawn).
    CHECK(drawn_containing(after, "mat"));
}
