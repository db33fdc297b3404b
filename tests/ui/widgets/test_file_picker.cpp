// The model folder browser's listing (ui/widgets/file_picker.h).

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
#include "ui/widgets/file_picker.h"

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

TEST_CASE("file picker: model folders (config.json inside) are marked, image files listed only for images") {
    test::TempDir dir;
    std::filesystem::create_directories(dir.file("gpt2"));
    test::write_bytes(dir.file("gpt2/config.json"), "{}");
    std::filesystem::create_directories(dir.file("photos"));
    std::filesystem::create_directories(dir.file(".hidden"));
    test::write_bytes(dir.file("cat.png"), "x");
    test::write_bytes(dir.file("notes.txt"), "x");
    std::string error;
    const auto models = ui::list_folder(dir.path(), ui::PickKind::model_folder, error);
    CHECK(error.empty());
    REQUIRE(models.size() == 2);
    CHECK(models[0].name == "gpt2");
    CHECK(models[0].is_model);
    CHECK(models[1].name == "photos");
    CHECK_FALSE(models[1].is_model);
    const auto images = ui::list_folder(dir.path(), ui::PickKind::image_file, error);
    REQUIRE(images.size() == 3);
    CHECK(images[2].name == "cat.png");
    CHECK_FALSE(images[0].is_model);   // not looked at for images
    CHECK(ui::is_model_folder(dir.file("gpt2")));
    CHECK_FALSE(ui::is_model_folder(dir.file("photos")));
    ui::list_folder(dir.file("no-such-folder"), ui::PickKind::model_folder, error);
    CHECK(error.find("no-such-folder") != std::string::npos);
}
