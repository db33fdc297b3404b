// File > Export map (session/export_map.h): the selected head's map of a result, as the
// CSV and NPY writers make it, and a PNG; a bad path fails naming it, writing nothing.

#include "core/base/error.h"
#include "core/models/model_registry.h"
#include "core/render/map_export.h"
#include "session/export_map.h"
#include "session/model_session.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>

using namespace headscope;
using namespace headscope::session;
using headscope::test::read_bytes;
using headscope::test::TempDir;

namespace {

std::shared_ptr<const Snapshot> toy_run() {
    Request request;
    request.model.name = "builtin:toy-text";
    request.input.text = "the cat sat on the mat";
    ModelSession session;
    session.adopt(open_model(request.model.name, request.model.config), request.model);
    return session.compute(request, 1);
}

}   // namespace

TEST_CASE("export map: CSV, NPY and PNG of the selected head, named after model and head") {
    const auto run = toy_run();
    TempDir dir;
    const std::string csv = default_export_path(*run, 1, 2, MapFormat::csv, dir.path().string());
    CHECK(std::filesystem::path(csv).filename() == "builtin-toy-text-head-1.2.csv");
    const Matrix& map = *run->head_map(1, 2);
    CHECK(export_head_map(*run, 1, 2, MapFormat::csv, csv, Colormap::viridis, false) > 0);
    CHECK(read_bytes(csv) == map_csv(map, run->input.labels, run->input.labels));

    const std::string npy = dir.file("map.npy");
    export_head_map(*run, 1, 2, MapFormat::npy, npy, Colormap::viridis, false);
    const std::vector<std::byte> expected = map_npy(map);
    CHECK(read_bytes(npy) == std::string(reinterpret_cast<const char*>(expected.data()), expected.size()));

    const std::string png = dir.file("map.png");
    export_head_map(*run, 1, 2, MapFormat::png, png, Colormap::magma, true);
    CHECK(read_bytes(png).substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_CASE("export map: a path that cannot be written, or a head that is not there, fails with one line") {
    const auto run = toy_run();
    TempDir dir;
    CHECK_THROWS_AS(
        export_head_map(*run, 0, 0, MapFormat::csv, dir.file("no/such/folder/map.csv"), Colormap::viridis, false),
        headscope::Error);
    CHECK_FALSE(std::filesystem::exists(dir.file("no")));
    CHECK_THROWS_WITH_AS(export_head_map(*run, 9, 0, MapFormat::csv, dir.file("x.csv"), Colormap::viridis, false),
                         "export: head 9.0 is not in builtin:toy-text", headscope::Error);
    CHECK_THROWS_WITH_AS(export_head_map(*run, 0, 0, MapFormat::npy, "", Colormap::viridis, false),
                         "export: no file name given", headscope::Error);
}
