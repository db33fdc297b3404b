// The window's state transitions and its worker thread, without a window.

#include "app/gui/app_state.h"
#include "app/gui/worker.h"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

using namespace headscope;
using namespace headscope::gui;

namespace {

// Waits (bounded) until the worker has answered `generation`.
bool wait_for(const Worker& worker, std::uint64_t generation) {
    for (int i = 0; i < 1000; ++i) {
        if (worker.answered() >= generation && !worker.busy()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

} // namespace

TEST_CASE("app state: views by name, fitting to a model, stepping and toggling") {
    CHECK(view_from_name("stages") == View::stages);
    CHECK_FALSE(view_from_name("nope").has_value());
    CHECK(view_name(View::compare) == "compare");

    AppState s;
    s.layer = 5;
    s.head = 9;
    s.disabled_heads = {{true, false, true, true, true}};   // from --disable before the model was known
    fit_to_model(s, 2, 4);
    CHECK(s.layer == 1);
    CHECK(s.head == 3);
    REQUIRE(s.disabled_heads.size() == 2);
    CHECK(s.disabled_heads[0] == std::vector<bool>{true, false, true, true});   // kept where it fits
    CHECK(s.disabled_heads[1] == std::vector<bool>(4, false));
    CHECK(s.hidden_heads.size() == 2);

    step_layer(s, -3, 2);
    CHECK(s.layer == 0);
    step_head(s, 1, 4);
    CHECK(s.head == 3);   // clamped at the last head
    toggle_disabled(s, 1, 2);
    CHECK(s.disabled_heads[1][2]);
    toggle_disabled(s, 1, 2);
    CHECK_FALSE(s.disabled_heads[1][2]);
    toggle_disabled(s, 7, 0);   // out of range: nothing happens

    const Request r = make_request(s);
    CHECK(r.disabled_heads == s.disabled_heads);
    CHECK_FALSE(r.also_flip_causal);
    s.view = View::compare;
    s.compare_mode = CompareMode::mask_on_off;
    CHECK(make_request(s).also_flip_causal);
}

TEST_CASE("app state: a dropped image switches a text model to the image model, other files are refused") {
    AppState s;
    CHECK(open_dropped_file(s, "/pics/Cat.JPG"));
    CHECK(s.image_path == "/pics/Cat.JPG");
    CHECK(s.model.name == "builtin:toy-vit");
    CHECK_FALSE(open_dropped_file(s, "/docs/notes.txt"));
    CHECK(s.image_path == "/pics/Cat.JPG");
}

TEST_CASE("worker: computes off the caller's thread, reports errors, and the newest request wins") {
    Worker worker;
    Request r;
    r.text = "one two three";
    const auto first = worker.submit(r);
    REQUIRE(wait_for(worker, first));
    auto snapshot = worker.latest();
    REQUIRE(snapshot);
    CHECK(snapshot->generation == first);
    CHECK(snapshot->input.labels.size() == 3);
    CHECK(snapshot->trace.layers.size() == 2);

    r.text = "";   // an empty sentence: an error, and the last good result stays
    const auto bad = worker.submit(r);
    REQUIRE(wait_for(worker, bad));
    CHECK(worker.latest()->generation == first);
    CHECK(worker.latest_error().first == bad);
    CHECK(worker.latest_error().second.find("empty") != std::string::npos);

    // A burst of requests: the last one is what ends up shown.
    std::uint64_t last = 0;
    for (int i = 1; i <= 20; ++i) {
        r.text = "word " + std::to_string(i);
        r.causal = i % 2 == 0;
        last = worker.submit(r);
    }
    REQUIRE(wait_for(worker, last));
    CHECK(worker.latest()->generation == last);
    CHECK(worker.latest()->input.labels.back() == "20");
    CHECK(worker.latest_error().second.empty());

    r.also_flip_causal = true;
    const auto flipped = worker.submit(r);
    REQUIRE(wait_for(worker, flipped));
    REQUIRE(worker.latest()->flipped.has_value());
    CHECK(worker.latest()->trace.mask.has_value() != worker.latest()->flipped->mask.has_value());
}

TEST_CASE("app state: the custom mask editor forbids, allows, clears and inverts pairs") {
    AppState s;
    set_forbidden(s, 2, 1, true);
    set_forbidden(s, 0, 3, true);
    set_forbidden(s, 2, 1, true);   // twice: still one entry
    CHECK(s.forbidden == std::vector<std::pair<int, int>>{{0, 3}, {2, 1}});
    CHECK(is_forbidden(s, 2, 1));
    set_forbidden(s, 2, 1, false);
    CHECK_FALSE(is_forbidden(s, 2, 1));
    invert_mask(s, 2);   // over 2 x 2: (0, 3) lies outside; all four cells become forbidden
    CHECK(s.forbidden == std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}});
    clear_mask(s);
    CHECK(s.forbidden.empty());
}

TEST_CASE("worker: the custom mask reaches the model, ANDed with the causal mask") {
    Worker worker;
    Request r;
    r.text = "a b c";
    r.forbidden = {{2, 0}, {9, 9}};   // (9, 9) is past T = 3: ignored
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    const auto snapshot = worker.latest();
    REQUIRE(snapshot->trace.mask.has_value());
    CHECK_FALSE((*snapshot->trace.mask)(2, 0));
    CHECK((*snapshot->trace.mask)(0, 2));
    for (const HeadTrace& head : snapshot->trace.layers[0].heads) CHECK(head.weights(2, 0) == 0.0f);
    r.causal = true;
    const auto g2 = worker.submit(r);
    REQUIRE(wait_for(worker, g2));
    CHECK_FALSE((*worker.latest()->trace.mask)(0, 2));   // causal
    CHECK_FALSE((*worker.latest()->trace.mask)(2, 0));   // custom
    CHECK((*worker.latest()->trace.mask)(2, 1));
}
