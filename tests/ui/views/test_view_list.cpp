// The list of views (ui/views/view_list.h): the tabs, --view's names and its help come
// from it, so its names must be usable as flags and what each view asks of the worker
// must follow the state.

#include "ui/views/view_list.h"

#include <doctest/doctest.h>

#include <cctype>
#include <set>

using namespace headscope;
using namespace headscope::ui;

TEST_CASE("view list: names unique, lower case words, each with a title and a summary") {
    const auto views = make_views();
    REQUIRE(views.size() >= 2);
    std::set<std::string> names;
    for (const auto& view : views) {
        const std::string name(view->name());
        CHECK(names.insert(name).second);
        CHECK_FALSE(name.empty());
        for (const char c : name) CHECK(std::islower(static_cast<unsigned char>(c)));
        CHECK(std::string(view->title()).size() > 0);
        CHECK_FALSE(view->summary().empty());
        CHECK(is_view_name(name));
        CHECK(view_summaries().find(name + ": ") != std::string::npos);
    }
    CHECK(views.front()->name() == "matrix");   // the default tab comes first
    CHECK_FALSE(is_view_name("nope"));
    // "matrix, tokens, ... or similarity": every name once, the last after " or ".
    const std::string names_text = view_names();
    CHECK(names_text.rfind("matrix, ", 0) == 0);
    CHECK(names_text.ends_with(" or " + std::string(views.back()->name())));
    for (const auto& view : views) CHECK(names_text.find(std::string(view->name())) != std::string::npos);
}

TEST_CASE("view list: only the Stages view asks for stages, only the Compare view for extra runs") {
    const session::AppState state;
    for (const auto& view : make_views()) {
        const bool compare = view->name() == "compare";
        const auto needs_in = [&](const char* mode) {
            // Each view reads only its own fields and leaves the others' alone.
            CHECK(view->restore(std::string(R"({"text_b":"another sentence","mode":")") + mode + "\"}").empty());
            return view->needs(state);
        };
        const session::ViewNeeds flip = needs_in("mask_on_off");
        const session::ViewNeeds second = needs_in("two_inputs");
        const session::ViewNeeds heads = needs_in("two_heads");
        // Compare asks for the flipped mask, or for input B once one is typed; no view else asks for a run.
        CHECK(flip.runs.size() == (compare ? 1u : 0u));
        if (compare) CHECK(flip.runs[0].flip_causal);
        CHECK(second.runs.size() == (compare ? 1u : 0u));
        if (compare) CHECK(second.runs[0].input.text == "another sentence");
        CHECK(heads.runs.empty());
        CHECK(heads.stages_of_layer == (view->name() == "stages"));
    }
}
