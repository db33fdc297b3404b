// A view's settings as JSON text: read all or nothing, each bad field named.

#include "core/base/error.h"
#include "session/view_settings.h"

#include <doctest/doctest.h>

using headscope::session::merge_settings;
using headscope::session::SettingsReader;
using headscope::session::SettingsWriter;

namespace {

enum class Fruit { apple, pear };

struct Picked {
    bool flag = false;
    int count = 3;
    float share = 0.5f;
    double ratio = 0.25;
    std::string name = "none";
    Fruit fruit = Fruit::apple;
};

std::string read_into(const std::string& text, Picked& into) {
    SettingsReader in(text);
    in.read("flag", into.flag);
    in.read("count", into.count, 0, 10);
    in.read("share", into.share, 0.0f, 1.0f);
    in.read("ratio", into.ratio, 0.0, 1.0);
    in.read("name", into.name);
    in.read("fruit", into.fruit, {{"apple", Fruit::apple}, {"pear", Fruit::pear}});
    return in.error();
}

}   // namespace

TEST_CASE("view settings: written and read back, each type") {
    SettingsWriter out;
    out.set("flag", true).set("count", 7).set("share", 0.75).set("ratio", 1.0).set("name", "café").set("fruit", "pear");
    CHECK(out.text() == R"({"count":7,"flag":true,"fruit":"pear","name":"café","ratio":1.0,"share":0.75})");
    Picked back;
    CHECK(read_into(out.text(), back).empty());
    CHECK(back.flag);
    CHECK(back.count == 7);
    CHECK(back.share == 0.75f);
    CHECK(back.ratio == 1.0);
    CHECK(back.name == "café");
    CHECK(back.fruit == Fruit::pear);
}

TEST_CASE("view settings: a field left out stays, a bad one is named and stops the reading") {
    Picked kept;
    CHECK(read_into("{}", kept).empty());
    CHECK(kept.count == 3);
    CHECK(kept.name == "none");
    CHECK(read_into(R"({"count": 11})", kept) == "'count': expected a whole number in 0..10");
    CHECK(read_into(R"({"count": 2.5})", kept) == "'count': expected a whole number in 0..10");
    CHECK(read_into(R"({"flag": 1})", kept) == "'flag': expected true or false");
    CHECK(read_into(R"({"share": 1.5})", kept) == "'share': expected a number in 0..1");
    CHECK(read_into(R"({"name": 4})", kept) == "'name': expected a string");
    CHECK(read_into(R"({"fruit": "plum"})", kept) == "'fruit': expected one of apple, pear");
    CHECK(read_into("[]", kept) == "expected a JSON object of settings, {...}");
    CHECK(read_into("{not json", kept) == "expected a JSON object of settings, {...}");
    // The first error is the one reported; the fields after it are not read.
    Picked partly;
    CHECK(read_into(R"({"count": -1, "name": "late"})", partly) == "'count': expected a whole number in 0..10");
    CHECK(partly.name == "none");
}

TEST_CASE("view settings: a patch's fields replace the base's, the rest stay") {
    CHECK(merge_settings(R"({"zoom":4.0,"mode":"two_heads"})", R"({"mode":"two_inputs"})", "x") ==
          R"({"mode":"two_inputs","zoom":4.0})");
    CHECK(merge_settings("", R"({"keep_mass":true})", "x") == R"({"keep_mass":true})");
    CHECK_THROWS_WITH_AS(merge_settings("[1]", "{}", "--keep-mass"), "--keep-mass: expected a JSON object of settings",
                         headscope::Error);
}
