// Nothing cut off, nothing on top of another: every view at 1024x640, and at content
// scale 2 in a window twice as large (what a HiDPI laptop shows), under xvfb-run. The
// window's test build (headscope-test-window --item-rects) lists where every control of
// the screenshot's frame lies (tests/gui/harness/item_rects.h); the checks below read it.

#include "core/tensor/safetensors.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using headscope::test::TempDir;

namespace {

struct Rect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    float width() const { return x1 - x0; }
    float height() const { return y1 - y0; }
};

struct Item {
    std::string window;
    Rect rect;
    Rect clip;   // the window's visible inner rectangle
    bool scrolls_x = false;
    bool scrolls_y = false;
};

std::vector<Item> read_items(const std::string& path) {
    std::vector<Item> items;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        Item item;
        std::string id;
        std::getline(fields, item.window, '\t');
        std::getline(fields, id, '\t');
        int sx = 0;
        int sy = 0;
        fields >> item.rect.x0 >> item.rect.y0 >> item.rect.x1 >> item.rect.y1 >> item.clip.x0 >> item.clip.y0 >>
            item.clip.x1 >> item.clip.y1 >> sx >> sy;
        REQUIRE_MESSAGE(fields, "a line the harness should not write: " << line);
        item.scrolls_x = sx != 0;
        item.scrolls_y = sy != 0;
        items.push_back(item);
    }
    return items;
}

std::string describe(const Item& item) {
    char text[256];
    std::snprintf(text, sizeof text, "%s [%.0f,%.0f .. %.0f,%.0f]", item.window.c_str(), item.rect.x0, item.rect.y0,
                  item.rect.x1, item.rect.y1);
    return text;
}

bool contains(const Rect& a, const Rect& b) {
    return a.x0 <= b.x0 + 0.5f && a.y0 <= b.y0 + 0.5f && a.x1 >= b.x1 - 0.5f && a.y1 >= b.y1 - 0.5f;
}

// What is wrong with a frame's layout, one line each. `scale`: the content scale, for
// ImGui's own reach past a window's edge (a selectable widens by half the item spacing,
// 4 px at 1x, to the left).
std::vector<std::string> layout_faults(const std::vector<Item>& all, float scale) {
    std::vector<Item> items;
    for (const Item& item : all) {
        // ImGui's implicit window (items of its own), boxes' inner text fields (they scroll
        // with the caret), separators and 1-px spacers: not controls that can collide.
        const std::string last = item.window.substr(item.window.rfind('/') + 1);
        if (item.window.starts_with("Debug##") || last.starts_with("##")) continue;
        if (item.rect.width() <= 1.5f || item.rect.height() <= 1.5f) continue;
        items.push_back(item);
    }
    std::vector<std::string> faults;
    const float reach = 4.0f * scale + 1.0f;
    for (const Item& item : items) {
        const Rect& r = item.rect;
        const Rect& c = item.clip;
        const bool in_sight = r.y0 < c.y1;
        if (in_sight && !item.scrolls_x && (r.x1 > c.x1 + 1.0f || r.x0 < c.x0 - reach)) {
            faults.push_back("cut off at the side: " + describe(item));
        }
        if (in_sight && !item.scrolls_y && r.y1 > c.y1 + 1.0f) faults.push_back("cut off below: " + describe(item));
    }
    for (std::size_t a = 0; a < items.size(); ++a) {
        for (std::size_t b = a + 1; b < items.size(); ++b) {
            const Item& p = items[a];
            const Item& q = items[b];
            if (p.window != q.window) continue;
            const float x = std::min(p.rect.x1, q.rect.x1) - std::max(p.rect.x0, q.rect.x0);
            const float y = std::min(p.rect.y1, q.rect.y1) - std::max(p.rect.y0, q.rect.y0);
            // One inside the other is a row and its cells, a table and its rows.
            if (x > 1.0f && y > 1.0f && !contains(p.rect, q.rect) && !contains(q.rect, p.rect)) {
                faults.push_back("overlap: " + describe(p) + " and " + describe(q));
            }
        }
    }
    return faults;
}

// `session`: a session file's text, opened with --session (instead of --fresh in `args`).
void check_layout(const std::string& args, const std::string& size, float scale, const std::string& session = "") {
    TempDir dir;
    const std::string rects = dir.file("items.tsv");
    std::string session_flag;
    if (!session.empty()) {
        headscope::test::write_bytes(dir.file("session.json"), session);
        session_flag = " --session '" + dir.file("session.json") + "'";
    }
    char flags[128];
    std::snprintf(flags, sizeof flags, " --size %s --scale %g", size.c_str(), static_cast<double>(scale));
    const std::string command =
        "XDG_CONFIG_HOME='" + dir.path().string() + "' " + headscope::test::xvfb_run_prefix(dir, "2100x1400") +
        "'" HEADSCOPE_TEST_WINDOW "' --screenshot '" + dir.file("shot.png") + "' --item-rects '" + rects + "' " + args +
        session_flag + flags + " 2>'" + dir.file("err") + "' </dev/null";
    INFO(args << flags);
    REQUIRE(headscope::test::run_command(command, dir.file("err")) == 0);
    const std::vector<Item> items = read_items(rects);
    CHECK(items.size() >= 40);   // the frame's controls were seen: a check of nothing fails
    for (const std::string& fault : layout_faults(items, scale)) FAIL_CHECK(fault);
}

// A Llama-shaped folder with GPT-2 small's 12 heads per layer and room for 1,000 tokens, the
// sizes shrunk (E = 48, 2 layers, 64 ids, no tokenizer: the window takes ids), seeded: what
// a real model's long input asks of the layout (1,000 x 1,000 maps, 12 columns of heads),
// at a demo model's cost.
void write_wide_llama(const std::string& folder) {
    std::filesystem::create_directories(folder);
    headscope::test::write_bytes(
        folder + "/config.json",
        R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 48, "head_dim": 4,
            "num_attention_heads": 12, "num_key_value_heads": 12, "num_hidden_layers": 2, "intermediate_size": 32,
            "vocab_size": 64, "max_position_embeddings": 1100, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "hidden_act": "silu", "tie_word_embeddings": true, "torch_dtype": "float32"})");
    std::uint32_t state = 12345;              // a linear congruential generator: the same weights every run
    std::vector<std::vector<float>> values;   // kept alive until the file is written
    std::vector<headscope::TensorToWrite> tensors;
    const auto add = [&](const std::string& name, headscope::Shape shape, float centre, float spread) {
        std::size_t n = 1;
        for (const auto d : shape) n *= static_cast<std::size_t>(d);
        std::vector<float>& v = values.emplace_back(n);
        for (float& x : v) {
            state = state * 1664525u + 1013904223u;
            x = centre + spread * (static_cast<float>(state >> 8) / 16777216.0f - 0.5f);
        }
        tensors.push_back(headscope::tensor_f32(name, std::move(shape), v));
    };
    add("model.embed_tokens.weight", {64, 48}, 0.0f, 2.0f);
    for (int l = 0; l < 2; ++l) {
        const std::string at = "model.layers." + std::to_string(l) + ".";
        add(at + "input_layernorm.weight", {48}, 1.0f, 0.2f);
        for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"})
            add(at + "self_attn." + p + ".weight", {48, 48}, 0.0f, 0.6f);
        add(at + "post_attention_layernorm.weight", {48}, 1.0f, 0.2f);
        add(at + "mlp.gate_proj.weight", {32, 48}, 0.0f, 0.5f);
        add(at + "mlp.up_proj.weight", {32, 48}, 0.0f, 0.5f);
        add(at + "mlp.down_proj.weight", {48, 32}, 0.0f, 0.5f);
    }
    add("model.norm.weight", {48}, 1.0f, 0.2f);
    headscope::write_safetensors(folder + "/model.safetensors", tensors);
}

// 1,000 ids of the wide model's 64, comma-separated.
std::string thousand_ids() {
    std::string ids;
    for (int i = 0; i < 1000; ++i) {
        if (i > 0) ids += ',';   // in two steps: GCC 12 mis-warns on const char* + std::string
        ids += std::to_string((i * 37 + i / 7) % 64);
    }
    return ids;
}

constexpr const char* text_views[] = {"matrix", "tokens", "model",   "compare",
                                      "stages", "heads",  "rollout", "similarity"};
constexpr const char* image_views[] = {"matrix", "image", "model", "rollout"};

}   // namespace

TEST_CASE(
    "layout checks: a control past its window's edge, or partly over another, is a fault (a row's cells are not)") {
    const auto item = [](const char* window, Rect r) { return Item{window, r, {0, 0, 100, 100}, false, false}; };
    CHECK(layout_faults({item("w", {10, 10, 50, 30}), item("w", {60, 10, 90, 30})}, 1.0f).empty());
    CHECK(layout_faults({item("w", {10, 10, 50, 30}), item("w", {40, 10, 90, 30})}, 1.0f).size() == 1);
    CHECK(layout_faults({item("w", {10, 10, 95, 30}), item("w", {20, 12, 40, 28})}, 1.0f).empty());
    CHECK(layout_faults({item("w", {10, 10, 50, 30}), item("v", {40, 10, 90, 30})}, 1.0f).empty());
    CHECK(layout_faults({item("w", {60, 10, 110, 30})}, 1.0f).size() == 1);
    CHECK(layout_faults({item("w", {60, 90, 90, 110})}, 1.0f).size() == 1);
    Item scrolled = item("w", {60, 90, 90, 110});
    scrolled.scrolls_y = true;
    CHECK(layout_faults({scrolled}, 1.0f).empty());
    CHECK(layout_faults({item("w", {-4, 10, 50, 30})}, 1.0f).empty());   // a selectable's reach
    CHECK(layout_faults({item("w", {-4, 10, 50, 30})}, 0.5f).size() == 1);
}

TEST_CASE("gui layout: every view at 1024x640 and at 2x scale: nothing cut off, nothing overlapping") {
    TempDir models;
    const std::string wide = models.file("wide-llama");
    write_wide_llama(wide);
    const std::string ids = thousand_ids();
    for (const float scale : {1.0f, 2.0f}) {
        const std::string size = scale == 1.0f ? "1024x640" : "2048x1280";
        for (const char* view : text_views) check_layout(std::string("--fresh --view ") + view, size, scale);
        for (const char* view : image_views) {
            check_layout(std::string("--fresh --model builtin:tiny-shapes --view ") + view, size, scale);
        }
        // DINOv2 with registers: the registers' column beside the picture, its options beside the others.
        check_layout(std::string("--fresh --model '") + HEADSCOPE_SOURCE_DIR +
                         "/tests/checkpoints/dinov2_reg_tiny' --image '" + HEADSCOPE_SOURCE_DIR +
                         "/tests/images/rgb.png' --view image",
                     size, scale);
        // A long input on a model with 12 heads a layer: the maps of 1,000 x 1,000 cells, the
        // Model grid's 12 columns, the Heads plot's layer names.
        for (const char* view : {"matrix", "model", "compare", "heads"}) {
            check_layout("--fresh --model '" + wide + "' --tokens " + ids + " --view " + view, size, scale);
        }
        // The Heads view with its importance map (labelled layers x heads) beside the plot.
        check_layout("--fresh --view heads --scan-importance", size, scale);
        // A head off: the predictions panel's KL line (under its heading when narrow) and
        // the intact model's table beside the ablated one.
        check_layout("", size, scale,
                     R"({"headscope_session":1,"model":{"name":"builtin:tiny-story"},"disabled_heads":)"
                     R"({"layers":2,"heads":4,"off":[[1,0]]},"layer":1,"head":0,"view":"matrix"})");
    }
}

namespace {

// The right edge of the controls after `actions` (xdotool commands on the window \$w),
// from the rectangles the window writes when its screenshot is taken (16 s in). The
// controls end at x = 348 in a 1280x800 window; the bar is the 6 px after them.
float controls_right_after(const std::string& actions) {
    TempDir dir;
    const std::string rects = dir.file("items.tsv");
    const std::string launch = "'" HEADSCOPE_TEST_WINDOW "' --fresh --screenshot-after 16 --screenshot '" +
                               dir.file("shot.png") + "' --item-rects '" + rects + "'";
    const std::string script = launch + " & pid=\\$!; " +
                               "w=\\$(timeout 60 xdotool search --sync --name '^Headscope' | head -n 1); "
                               "[ -n \\\"\\$w\\\" ] || exit 3; sleep 3; " +
                               actions + " wait \\$pid";
    const std::string command = "XDG_CONFIG_HOME='" + dir.path().string() + "' " +
                                headscope::test::xvfb_run_prefix(dir) + "bash -c \"" + script + "\" </dev/null";
    REQUIRE(headscope::test::exit_code_of(std::system(command.c_str())) == 0);
    float right = 0.0f;
    for (const Item& item : read_items(rects)) {
        if (item.window.starts_with("Headscope/controls_")) right = std::max(right, item.clip.x1);
    }
    return right;
}

// Real pointer events (xdotool): press on the bar, move 100 px right in steps, release.
// Each step waits a slow frame (0.8 s): a press and a move inside one frame would be seen as one.
const std::string drag_bar_right =
    "xdotool mousemove --window \\$w 351 400 sleep 0.8 mousedown 1 sleep 0.8 mousemove --window \\$w 400 400 "
    "sleep 0.8 mousemove --window \\$w 451 400 sleep 0.8 mouseup 1; ";

}   // namespace

TEST_CASE("gui layout: dragging the bar between the controls and the views moves it (xdotool)") {
    CHECK(controls_right_after(drag_bar_right) == doctest::Approx(344.0f + 100.0f).epsilon(0.01));
}

TEST_CASE("gui layout: a double click on the bar puts it back where it started (xdotool)") {
    // Dragged, then two clicks 0.15 s apart on the bar where it was dropped (the test window
    // reads clicks up to 1 s apart as a double: its frames may be slow).
    const std::string double_click =
        "sleep 1.5; xdotool mousemove --window \\$w 451 400 click --repeat 2 --delay 150 1; ";
    CHECK(controls_right_after(drag_bar_right + double_click) == doctest::Approx(344.0f).epsilon(0.01));
}
