// The recent models / files list (session/recent.h).

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

TEST_CASE("recent models and files: where, round trip, bounded, missing entries dropped, corrupt file ignored") {
    CHECK(recent_file_path("/cfg", "/home/u") == "/cfg/headscope/recent.txt");
    CHECK(recent_file_path(nullptr, "/home/u") == "/home/u/.config/headscope/recent.txt");
    CHECK(recent_file_path("relative", "/home/u") == "/home/u/.config/headscope/recent.txt");   // XDG: absolute only
    CHECK(recent_file_path(nullptr, nullptr).empty());

    test::TempDir dir;
    const std::string path = dir.file("config/headscope/recent.txt");
    RecentRead nothing = read_recent(path);   // the first session: no file, no warning
    CHECK(nothing.lists.models.empty());
    CHECK(nothing.warning.empty());

    RecentLists lists;
    for (int i = 0; i < 12; ++i) {
        const std::string folder = dir.file("model " + std::to_string(i));   // a space in the name
        std::filesystem::create_directories(folder);
        push_recent(lists.models, folder);
    }
    push_recent(lists.models, dir.file("model 3"));   // again: moves to the front, once
    CHECK(lists.models.size() == recent_limit);
    CHECK(lists.models.front() == dir.file("model 3"));
    CHECK(std::count(lists.models.begin(), lists.models.end(), dir.file("model 3")) == 1);
    test::write_bytes(dir.file("cat.png"), "x");
    lists.files = {dir.file("cat.png"), dir.file("gone.png")};
    write_recent(path, lists);   // creates config/headscope/

    RecentRead read = read_recent(path);
    CHECK(read.warning.empty());
    CHECK(read.lists.models == lists.models);
    CHECK(read.lists.files == std::vector<std::string>{dir.file("cat.png")});   // gone.png dropped

    std::filesystem::remove(dir.file("model 3"));   // a folder deleted between sessions
    read = read_recent(path);
    CHECK(read.lists.models.size() == recent_limit - 1);
    CHECK(read.lists.models.front() == dir.file("model 11"));

    // A longer list than the bound (edited by hand) is cut; a corrupt file is ignored.
    std::string text = "# headscope recent models and files, newest first (safe to delete)\n";
    for (int i = 0; i < 12; ++i) text += "model " + dir.file("model " + std::to_string(i == 3 ? 4 : i)) + "\n";
    test::write_bytes(path, text);
    CHECK(read_recent(path).lists.models.size() == recent_limit);
    test::write_bytes(path, std::string("\x89PNG\r\n\x1a\n\0\0", 10));
    read = read_recent(path);
    CHECK(read.lists.models.empty());
    CHECK(read.warning.find(path) != std::string::npos);
    CHECK(read.warning.find("ignored") != std::string::npos);
    test::write_bytes(path, "# headscope recent models and files, newest first (safe to delete)\nmodel\nplugin /x\n");
    CHECK(read_recent(path).warning.find("line 2") != std::string::npos);
    // The next write replaces it whole.
    write_recent(path, lists);
    CHECK(read_recent(path).warning.empty());
}

TEST_CASE("recent lists: a file or model that failed to open is taken off, by the path as kept") {
    std::vector<std::string> list = {"/models/gpt2", "/models/llama", "/pictures/cat.png"};
    CHECK(forget_recent(list, "/models/llama/"));   // as typed, trailing slash and all
    CHECK(list == std::vector<std::string>{"/models/gpt2", "/pictures/cat.png"});
    CHECK_FALSE(forget_recent(list, "/models/llama"));
    CHECK(list.size() == 2);
}
