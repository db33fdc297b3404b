// Sessions (session/session_file.h): every choice saved comes back, a field left out
// keeps its value, and a bad file is refused naming the file and the field.

#include "core/base/error.h"
#include "session/session_file.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace headscope;
using namespace headscope::session;

namespace {

AppState chosen() {
    AppState s;
    s.model.name = "builtin:toy-text";   // a demo model built from the settings below
    s.model.config.seed = 18446744073709551615ull;
    s.model.config.arch = ToyArch::modern;
    s.text = "The cat, \"sat\"\non the mat";
    s.text_is_ids = true;
    s.image_path = "/pictures/cat.png";
    s.labels = "a photo of a cat\n49406, 2368, 49407";
    s.labels_are_ids = true;
    s.causal = false;
    s.disabled_heads = HeadMask(12, 12);
    s.disabled_heads.set(3, 4);
    s.disabled_heads.set(11, 0);
    s.hidden_heads = HeadMask(12, 12);
    s.hidden_heads.set(0, 7);
    s.forbidden = {{1, 0}, {5, 2}};
    s.layer = 5;
    s.head = 9;
    s.query = 3;
    s.view = "similarity";
    s.colormap = Colormap::magma;
    s.scale = HeatScale::log;
    s.view_settings["compare"] = R"({"mode":"two_inputs","text_b":"a dog"})";
    s.view_settings["matrix"] = R"({"first_col":10.5,"first_row":20.0,"zoom":4.0})";
    return s;
}

}   // namespace

TEST_CASE("session: a checkpoint folder is kept by its name alone, without the demo models' settings") {
    AppState saved = chosen();
    saved.model.name = "/models/gpt2-small";
    const nlohmann::json written = nlohmann::json::parse(session_json(saved));
    CHECK(written.at("model") == nlohmann::json{{"name", "/models/gpt2-small"}});
    const AppState back = apply_session(session_json(saved), "s.json", AppState{});
    CHECK(back.model.name == saved.model.name);
    CHECK(back.model.config.seed == AppState{}.model.config.seed);   // the demo settings as they were
    CHECK(back.model.config.arch == AppState{}.model.config.arch);
}

TEST_CASE("session: every choice comes back as it was saved") {
    const AppState saved = chosen();
    const AppState back = apply_session(session_json(saved), "s.json", AppState{});
    CHECK(back.model == saved.model);
    CHECK(back.text == saved.text);
    CHECK(back.text_is_ids);
    CHECK(back.image_path == saved.image_path);
    CHECK_FALSE(back.image_is_demo);
    CHECK(back.labels == saved.labels);
    CHECK(back.labels_are_ids);
    CHECK(back.causal == std::optional<bool>(false));
    CHECK(back.disabled_heads == saved.disabled_heads);
    CHECK(back.hidden_heads == saved.hidden_heads);
    CHECK(back.forbidden == saved.forbidden);
    CHECK(back.layer == 5);
    CHECK(back.head == 9);
    CHECK(back.query == 3);
    CHECK(back.view == "similarity");
    CHECK(back.colormap == Colormap::magma);
    CHECK(back.scale == HeatScale::log);
    CHECK(back.view_settings == saved.view_settings);
    // Saved again, the same text: nothing is lost or changed on the way.
    CHECK(session_json(back) == session_json(saved));

    headscope::test::TempDir dir;
    save_session(dir.file("s.json"), saved);
    CHECK(session_json(open_session(dir.file("s.json"), AppState{})) == session_json(saved));
}

TEST_CASE("session: a field left out keeps its value, the model's own causal setting is null") {
    AppState before;
    before.text = "kept";
    before.layer = 2;
    const AppState after = apply_session(R"({"headscope_session": 1, "head": 3, "causal": null})", "s.json", before);
    CHECK(after.text == "kept");
    CHECK(after.layer == 2);
    CHECK(after.head == 3);
    CHECK_FALSE(after.causal.has_value());
}

TEST_CASE("session: a bad file is refused naming the file and the field") {
    const auto refused = [](const std::string& text) {
        try {
            (void)apply_session(text, "s.json", AppState{});
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    CHECK(refused(R"({"head": 3})") ==
          "s.json: field 'headscope_session': expected 1 (a session file of this version)");
    CHECK(refused(R"({"headscope_session": 1, "layer": "x"})") == "s.json: field 'layer': expected a whole number");
    CHECK(refused(R"({"headscope_session": 1, "model": {"init": "clever"}})") ==
          "s.json: field 'model.init': expected \"structured\" or \"random\"");
    CHECK(refused(R"({"headscope_session": 1, "colormap": "jet"})") ==
          "s.json: field 'colormap': 'jet' is not a colour map (viridis, magma, cividis, greys)");
    CHECK(refused(R"({"headscope_session": 1, "disabled_heads": {"layers": 2, "heads": 2, "off": [[2, 0]]}})") ==
          "s.json: field 'disabled_heads.off': expected [layer, head] pairs inside 2 x 2, got [2,0]");
    CHECK(refused(R"({"headscope_session": 1, "forbidden": [[1, -1]]})") ==
          "s.json: field 'forbidden': expected [query, key] pairs of positions, got [1,-1]");
    CHECK(refused(R"({"headscope_session": 1, "views": []})") == "s.json: field 'views': expected an object");
    CHECK(refused(R"({"headscope_session": 1, "views": {"matrix": 2}})") ==
          "s.json: field 'views.matrix': expected an object of the view's settings");
    CHECK(refused("[1, 2]") == "s.json: expected an object of a session's fields, {...}");
    CHECK(refused(R"({"headscope_session": 1, "model": 3})") == "s.json: field 'model': expected an object");
    CHECK(refused("{").rfind("s.json", 0) == 0);
    headscope::test::TempDir dir;
    CHECK_THROWS_AS((void)open_session(dir.file("missing.json"), AppState{}), Error);
}

TEST_CASE("session: a file saved before the views kept their settings gives input B to the Compare view") {
    const std::string old = R"({"headscope_session": 1, "compare_text": "a dog", "compare_image": ""})";
    const AppState back = apply_session(old, "old.json", AppState{});
    REQUIRE(back.view_settings.contains("compare"));
    CHECK(back.view_settings.at("compare") == R"({"image_b":"","text_b":"a dog"})");
    // The Compare view's own settings, where saved, stand.
    const std::string both =
        R"({"headscope_session": 1, "compare_text": "a dog", "views": {"compare": {"text_b": "a cat"}}})";
    CHECK(apply_session(both, "both.json", AppState{}).view_settings.at("compare") == R"({"text_b":"a cat"})");
}
