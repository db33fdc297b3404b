// Each view's own settings (View::settings / restore / fit_to_model / fit_to_length):
// what a session keeps, a flag or another view gives, and a new model clamps.

#include "ui/views/compare_settings.h"
#include "ui/views/view_list.h"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>

using namespace headscope;
using namespace headscope::ui;

namespace {

std::unique_ptr<View> view_named(const std::string& name) {
    for (auto& view : make_views()) {
        if (view->name() == name) return std::move(view);
    }
    FAIL("no view " << name);
    return nullptr;
}

ModelInfo shaped(Eigen::Index layers, Eigen::Index heads) {
    ModelInfo info;
    info.n_layers = layers;
    info.n_heads = heads;
    return info;
}

}   // namespace

TEST_CASE("view settings: each view's settings read back into a fresh view give the same settings") {
    // Settings each view's controls can set, away from its defaults.
    const std::map<std::string, std::string> chosen = {
        {"matrix", R"({"edit_mask":true,"first_col":10.5,"first_row":20.0,"zoom":4.0})"},
        {"compare", R"({"b_chosen":true,"b_head":2,"b_label":1,"b_layer":3,"first_col":0.0,"first_row":0.0,)"
                    R"("image_b":"b.png","mode":"text_tower","text_b":"a dog","zoom":1.0})"},
        {"model", R"({"colour_by_metric":true,"importance":true,"sort_by_metric":false})"},
        // The discard ratio at its slider's top: 0.99 as a float.
        {"rollout", R"({"discard_ratio":0.9900000095367432,"end_layer":-1,"fusion":"max","row":4,"start_layer":2})"},
        {"image",
         R"({"average":true,"column":false,"keep_mass":true,"keep_mass_share":0.25,"mark_high_norm":false,"probe":true,)"
         R"("registers_in_scale":true})"},
        {"similarity", R"({"first_col":3.0,"first_row":1.0,"zoom":2.0})"},
    };
    for (const auto& entry : chosen) {
        const std::string& name = entry.first;   // not a structured binding: CAPTURE's lambda reads it
        const std::string& settings = entry.second;
        CAPTURE(name);
        const auto view = view_named(name);
        CHECK(view->restore(settings).empty());
        CHECK(view->settings() == settings);
        const auto again = view_named(name);
        CHECK(again->settings() != settings);   // the defaults differ: the round trip is real
        CHECK(again->restore(view->settings()).empty());
        CHECK(again->settings() == settings);
    }
}

TEST_CASE("view settings: a field given replaces only itself, a bad one changes nothing and says why") {
    const auto compare = view_named("compare");
    REQUIRE(compare->restore(R"({"mode":"two_inputs","text_b":"a cat"})").empty());
    CHECK(compare->restore(R"({"text_b":"a dog"})").empty());
    CHECK(compare->settings().find(R"("mode":"two_inputs")") != std::string::npos);
    const std::string before = compare->settings();
    CHECK(compare->restore(R"({"text_b":"a bird","mode":"three_heads"})") ==
          "'mode': expected one of two_heads, two_layers, mask_on_off, ablation_on_off, two_inputs, text_tower");
    CHECK(compare->settings() == before);   // not even text_b, read before the bad field
    const auto image = view_named("image");
    CHECK(image->restore(R"({"keep_mass_share":1.5})") == "'keep_mass_share': expected a number in 0.01..0.99");
    CHECK(view_named("rollout")->restore(R"({"row":-2})") == "'row': expected a whole number in -1..2147483647");
    CHECK(view_named("model")->restore("[true]") == "expected a JSON object of settings, {...}");
    CHECK(view_named("rollout")->restore(R"({"fusion":""})") == "'fusion': expected one of mean, max, min");
}

TEST_CASE("view settings: another model clamps layers and heads, a shorter input lets a row go") {
    const auto compare = view_named("compare");
    REQUIRE(compare->restore(R"({"b_layer":11,"b_head":9,"b_chosen":true})").empty());
    compare->fit_to_model(shaped(4, 2));
    CHECK(compare->settings().find(R"("b_head":1,"b_label":0,"b_layer":3)") != std::string::npos);

    const auto rollout = view_named("rollout");
    REQUIRE(rollout->restore(R"({"start_layer":9,"end_layer":10,"row":30})").empty());
    rollout->fit_to_model(shaped(12, 12));
    CHECK(rollout->settings().find(R"("end_layer":10,)") != std::string::npos);   // inside 12 layers: kept
    rollout->fit_to_model(shaped(6, 4));
    // Past the last layer, the end is "the last" and the start the last layer.
    CHECK(rollout->settings().find(R"("end_layer":-1,)") != std::string::npos);
    CHECK(rollout->settings().find(R"("start_layer":5)") != std::string::npos);
    rollout->fit_to_length(31);
    CHECK(rollout->settings().find(R"("row":30)") != std::string::npos);
    rollout->fit_to_length(30);
    CHECK(rollout->settings().find(R"("row":-1)") != std::string::npos);

    // The mask being edited belonged to the last model's positions; the first model keeps
    // what a session gave.
    const auto matrix = view_named("matrix");
    REQUIRE(matrix->restore(R"({"edit_mask":true})").empty());
    matrix->fit_to_model(shaped(2, 2));
    CHECK(matrix->settings().find(R"("edit_mask":true)") != std::string::npos);
    matrix->fit_to_model(shaped(3, 2));
    CHECK(matrix->settings().find(R"("edit_mask":false)") != std::string::npos);
}

TEST_CASE("compare settings: B follows A until the user picks it") {
    CompareSettings s;
    follow_head_a(s, 1, 3, 2, 4);
    CHECK(s.b_layer == 1);
    CHECK(s.b_head == 0);   // the head after 3 of 4 wraps to 0
    s.mode = CompareMode::two_layers;
    follow_head_a(s, 1, 3, 2, 4);
    CHECK(s.b_layer == 0);   // the layer after 1 of 2
    s.b_chosen = true;
    s.b_layer = 1;
    s.b_head = 3;
    follow_head_a(s, 1, 3, 2, 4);
    CHECK(s.b_layer == 1);   // chosen: left alone, even equal to A
    CHECK(s.b_head == 3);
}
