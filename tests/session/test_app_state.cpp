// The window's state and its transitions (session/app_state.h), without a window.

#include "core/base/error.h"
#include "core/models/assets.h"
#include "core/models/model_registry.h"
#include "core/models/toy/toy_models.h"
#include "session/app_state.h"
#include "session/background_job.h"
#include "session/predictions.h"
#include "session/recent.h"
#include "session/worker.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <thread>

using namespace headscope;
using namespace headscope::session;

TEST_CASE("app state: fitting to a model, stepping and toggling") {
    AppState s;
    s.layer = 5;
    s.head = 9;
    s.disabled_heads = {{true, false, true, true, true}};   // from --disable before the model was known
    fit_to_model(s, 2, 4);
    CHECK(s.layer == 1);
    CHECK(s.head == 3);
    REQUIRE(s.disabled_heads.layers() == 2);
    CHECK(s.disabled_heads.layer_flags(0) == std::vector<bool>{true, false, true, true});   // kept where it fits
    CHECK(s.disabled_heads.layer_flags(1) == std::vector<bool>(4, false));
    CHECK(s.hidden_heads.layers() == 2);
    CHECK(s.hidden_heads.heads() == 4);

    step_layer(s, -3, 2);
    CHECK(s.layer == 0);
    step_head(s, 1, 4);
    CHECK(s.head == 3);   // clamped at the last head
    toggle_disabled(s, 1, 2);
    CHECK(s.disabled_heads.off(1, 2));
    toggle_disabled(s, 1, 2);
    CHECK_FALSE(s.disabled_heads.off(1, 2));
    toggle_disabled(s, 7, 0);   // out of range: nothing happens

    const Request r = make_request(s);
    CHECK(r.disabled_heads == s.disabled_heads);
    CHECK(r.variants.empty());   // other runs only while a view needs them
    const ViewNeeds flip{.runs = {{.name = "flipped", .flip_causal = true}}};
    CHECK(make_request(s, flip).variants == flip.runs);
    CHECK_FALSE(make_request(s, flip).stages_layer.has_value());   // only when asked
    CHECK(make_request(s, {.stages_of_layer = true}).stages_layer == std::optional<int>(s.layer));
    ViewNeeds second{.runs = {{.name = "input B"}}};
    second.runs[0].input.text = "another sentence";
    second.runs[0].input.image_path = "b.png";
    s.text_is_ids = true;   // another input is read as the main one is
    s.image_path = "a.png";
    s.own_resolution = true;
    const Request with_b = make_request(s, second);
    REQUIRE(with_b.variants.size() == 1);
    CHECK(with_b.variants[0].input.text == "another sentence");
    CHECK(with_b.variants[0].input.image_path == "b.png");   // its own picture
    CHECK(with_b.variants[0].input.ids_typed);               // the main input's reading
    CHECK(with_b.variants[0].input.image_options == with_b.input.image_options);
    CHECK(with_b.input.image_path == "a.png");
}

TEST_CASE("app state: sizing the head flags to a newly loaded model asks for nothing new") {
    // The first request goes out before the model's shape is known (no flags); its result
    // sizes them [L][H], all on. That must give the same request, or the worker would run
    // the model a second time for nothing.
    AppState s;
    const Request before = make_request(s);
    CHECK(before.disabled_heads.layers() == 0);
    fit_to_model(s, 3, 4);
    REQUIRE(s.disabled_heads.layers() == 3);
    CHECK(make_request(s) == before);
    toggle_disabled(s, 2, 1);
    const Request off = make_request(s);
    CHECK_FALSE(off == before);
    CHECK(off.disabled_heads == s.disabled_heads);
    toggle_disabled(s, 2, 1);   // back on: the same computation as before
    CHECK(make_request(s) == before);
}

TEST_CASE("app state: the showcase head is the most nameable one (induction, then previous token, then by score)") {
    // 2 layers x 3 heads; each head given exactly the metric its role is read from.
    std::vector<HeadMetrics> metrics(6);
    for (HeadMetrics& m : metrics) m.induction = 0.0;
    CHECK_FALSE(showcase_head(metrics, 3, false).has_value());   // no head has a name: leave the selection
    metrics[1].sink_mass = 0.95;                                 // 0.1: first token
    metrics[2].prev_token = 0.6;                                 // 0.2: previous token
    metrics[4].prev_token = 0.9;                                 // 1.1: a sharper previous-token head
    auto head = showcase_head(metrics, 3, false);
    REQUIRE(head.has_value());
    CHECK(head->layer == 1);
    CHECK(head->head == 1);
    metrics[5].induction = 0.45;   // 1.2: induction, weaker by score, still first
    head = showcase_head(metrics, 3, false);
    REQUIRE(head.has_value());
    CHECK(head->layer == 1);
    CHECK(head->head == 2);
    metrics[3].induction = 0.7;   // 1.0: the stronger induction head
    head = showcase_head(metrics, 3, false);
    REQUIRE(head.has_value());
    CHECK(head->layer == 1);
    CHECK(head->head == 0);
}

TEST_CASE("app state: a dropped image switches a text model to the image model, other files are refused") {
    AppState s;
    CHECK(open_dropped_file(s, "/pics/Cat.JPG"));
    CHECK(s.image_path == "/pics/Cat.JPG");
    CHECK(s.model.name == "builtin:toy-vit");
    CHECK_FALSE(open_dropped_file(s, "/docs/notes.txt"));
    CHECK(s.image_path == "/pics/Cat.JPG");
    // The trained text model (what a first launch opens on) cannot take a picture either.
    AppState first_launch;
    choose_model(first_launch, "builtin:tiny-story");
    CHECK(open_dropped_file(first_launch, "/pics/dog.png"));
    CHECK(first_launch.model.name == "builtin:toy-vit");
}

TEST_CASE("app state: the demo picture follows the demo image models, a chosen picture stays") {
    const std::string picture = (headscope::assets_dir() / "shapes.png").string();
    const std::string scene = (headscope::assets_dir() / "scenes" / "star.png").string();
    AppState s;
    s.image_path = picture;
    choose_model(s, "builtin:tiny-shapes");
    CHECK(s.image_path == scene);
    choose_model(s, "builtin:toy-vit");
    CHECK(s.image_path == picture);
    choose_picture(s, "/pics/cat.png");
    choose_model(s, "builtin:tiny-shapes");
    CHECK(s.image_path == "/pics/cat.png");
    // The scene itself, asked for by the user (--image, picked, dropped), stays too.
    AppState t;
    t.image_path = picture;
    choose_picture(t, scene);
    choose_model(t, "builtin:toy-vit");
    CHECK(t.image_path == scene);
    suit_demo_picture(t);
    CHECK(t.image_path == scene);
}

TEST_CASE(
    "app state: a shorter result lets go of a pinned query past its end, the demo ViT never gets own resolution") {
    AppState s;
    s.query = 1000;   // a patch of a 1025-token own-resolution run
    fit_to_length(s, 1025);
    CHECK(s.query == 1000);
    fit_to_length(s, 197);
    CHECK(s.query == -1);
    s.query = 5;
    fit_to_length(s, 197);
    CHECK(s.query == 5);

    s.own_resolution = true;
    s.model.name = "builtin:toy-vit";
    CHECK_FALSE(make_request(s).input.image_options.own_resolution);
    s.model.name = "/models/dino-vits16";
    CHECK(make_request(s).input.image_options.own_resolution);
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

TEST_CASE("app state: choosing a model, and going back after a cancelled or failed load") {
    AppState s;
    s.query = 3;
    s.causal = true;
    choose_model(s, "/models/gpt2");
    CHECK(s.model.name == "/models/gpt2");
    CHECK(s.query == -1);                // positions of the old input
    CHECK_FALSE(s.causal.has_value());   // the new model's default
    ModelChoice previous;
    previous.name = "builtin:toy-vit";
    previous.config.seed = 7;
    return_to_model(s, previous);
    CHECK(s.model == previous);
    return_to_model(s, std::nullopt);   // nothing loaded yet: the default built-in model
    CHECK(s.model == ModelChoice{});

    CHECK(is_builtin_model("builtin:toy-text"));
    CHECK_FALSE(is_builtin_model("/x/builtin:y"));
    CHECK(model_display_name("builtin:toy-vit") == "builtin:toy-vit");
    CHECK(model_display_name("/data/models/gpt2-medium/") == "gpt2-medium");
    CHECK(model_display_name("gpt2") == "gpt2");

    ModelInfo info;
    info.causal = true;
    CHECK(causal_on(s, info));   // unset: the model's default
    s.causal = false;
    CHECK_FALSE(causal_on(s, info));
    CHECK(make_request(s).causal == std::optional<bool>(false));
}

TEST_CASE("app state: command-line choices that do not fit the model are named, with what is shown instead") {
    ModelInfo info;
    info.name = "builtin:tiny-story";
    info.n_layers = 2;
    info.n_heads = 4;
    info.takes_text = true;
    StartChoices fits;
    fits.layer = 1;
    fits.head = 3;
    fits.query = 79;
    fits.disabled = {{0, 1}, {1, 3}};
    fits.text_given = true;
    CHECK(start_choice_notes(fits, info, AttentionKind::decoder, 80).empty());

    StartChoices wrong;
    wrong.layer = 9;
    wrong.head = -1;
    wrong.query = 80;
    wrong.disabled = {{0, 1}, {5, 9}, {1, 4}};
    wrong.image_given = true;
    const std::vector<std::string> notes = start_choice_notes(wrong, info, AttentionKind::decoder, 80);
    REQUIRE(notes.size() == 5);
    CHECK(notes[0] == "--layer 9: builtin:tiny-story has layers 0..1; showing layer 1");
    CHECK(notes[1] == "--head -1: builtin:tiny-story has heads 0..3; showing head 0");
    CHECK(notes[2] == "--query 80: the input has positions 0..79; no query pinned");
    CHECK(notes[3] == "--disable 5.9,1.4: builtin:tiny-story has layers 0..1 and heads 0..3; not disabled");
    CHECK(notes[4] == "--image: builtin:tiny-story reads text, not pictures; the picture is not used");

    ModelInfo vit = info;
    vit.name = "vit";
    vit.takes_text = false;
    vit.takes_image = true;
    StartChoices text;
    text.text_given = true;
    CHECK(start_choice_notes(text, vit, AttentionKind::decoder, 197) ==
          std::vector<std::string>{"--text: vit reads pictures, not text; the text is not used"});
}

TEST_CASE("app state: another model starts with every head on and no custom mask") {
    AppState s;
    fit_to_model(s, 2, 4);
    toggle_disabled(s, 1, 3);
    set_forbidden(s, 2, 1, true);
    REQUIRE(s.disabled_heads.any());
    REQUIRE_FALSE(s.forbidden.empty());
    leave_model_choices(s);
    CHECK_FALSE(s.disabled_heads.any());
    CHECK(s.forbidden.empty());
    CHECK(s.disabled_heads.layers() == 2);   // still sized: only the choices go
    // Choosing another model lets them go at once: its first run is asked without them.
    toggle_disabled(s, 0, 1);
    set_forbidden(s, 1, 0, true);
    choose_model(s, "builtin:toy-vit");
    CHECK_FALSE(s.disabled_heads.any());
    CHECK(s.forbidden.empty());
}
