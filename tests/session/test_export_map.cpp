// File > Export map (session/export_map.h): the selected head's map of a result, as the
// CSV and NPY writers make it, and a PNG; a bad path fails naming it, writing nothing.

#include "core/base/error.h"
#include "core/models/model_registry.h"
#include "core/render/map_export.h"
#include "core/render/map_svg.h"
#include "core/render/png_export.h"
#include "core/render/render.h"
#include "core/tensor/safetensors.h"
#include "session/export_map.h"
#include "session/model_session.h"
#include "session/run_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>

using namespace headscope;
using namespace headscope::session;
using headscope::test::read_bytes;
using headscope::test::TempDir;

namespace {

std::shared_ptr<const Snapshot> toy_run(std::optional<bool> causal = std::nullopt) {
    Request request;
    request.causal = causal;
    request.model.name = "builtin:toy-text";
    request.input.text = "the cat sat on the mat";
    ModelSession session;
    session.adopt(open_model(request.model.name, request.model.config), request.model);
    return session.compute(request, 1);
}

// A GPT-2-shaped checkpoint (a language-model head): every map and logit kept, or (a long
// input's way) maps streamed and the last row's logits only.
std::shared_ptr<const Snapshot> decoder_run(bool streamed) {
    Request request;
    request.model.name = HEADSCOPE_SOURCE_DIR;   // appended: GCC 12 mis-warns on a literal + std::string
    request.model.name += "/tests/checkpoints/gpt2_tiny";
    request.input.text = "5, 12, 7, 30, 9, 14, 22, 5, 12, 8";
    request.input.ids_typed = true;
    if (streamed) {
        request.maps = MapsPolicy::stream;
        request.keeps.logits_when_shown = true;
    }
    ModelSession session;
    session.adopt(open_model_choice(request.model, {}), request.model);
    return session.compute(request, 1);
}

}   // namespace

TEST_CASE("export map: CSV, NPY and PNG of the selected head, named after model and head") {
    const auto run = toy_run();
    TempDir dir;
    const std::string csv = default_export_path(*run, 1, 2, MapFormat::csv, dir.path().string());
    CHECK(std::filesystem::path(csv).filename() == "builtin-toy-text-head-1.2.csv");
    const Matrix& map = *run->head_map(1, 2);
    CHECK(export_head_map(*run, 1, 2, MapFormat::csv, csv, MapLook{}) > 0);
    CHECK(read_bytes(csv) == map_csv(map, run->input.labels, run->input.labels));

    const std::string npy = dir.file("map.npy");
    export_head_map(*run, 1, 2, MapFormat::npy, npy, MapLook{});
    const std::vector<std::byte> expected = map_npy(map);
    CHECK(read_bytes(npy) == std::string(reinterpret_cast<const char*>(expected.data()), expected.size()));

    const std::string png = dir.file("map.png");
    export_head_map(*run, 1, 2, MapFormat::png, png, MapLook{Colormap::magma, true, 1});
    CHECK(read_bytes(png).substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_CASE("export map: a path that cannot be written, or a head that is not there, fails with one line") {
    const auto run = toy_run();
    TempDir dir;
    CHECK_THROWS_AS(export_head_map(*run, 0, 0, MapFormat::csv, dir.file("no/such/folder/map.csv"), MapLook{}),
                    headscope::Error);
    CHECK_FALSE(std::filesystem::exists(dir.file("no")));
    CHECK_THROWS_WITH_AS(export_head_map(*run, 9, 0, MapFormat::csv, dir.file("x.csv"), MapLook{}),
                         "export: head 9.0 is not in builtin:toy-text", headscope::Error);
    CHECK_THROWS_WITH_AS(export_head_map(*run, 0, 0, MapFormat::npy, "", MapLook{}), "export: no file name given",
                         headscope::Error);
}

TEST_CASE("export map: the part in sight, in every format, its labels the rows' and columns' own") {
    const auto run = toy_run(true);
    TempDir dir;
    const Matrix& map = *run->head_map(0, 1);
    const MapRegion region{2, 1, 3, 4};   // queries 2..4, keys 1..4
    const std::vector<std::string>& labels = run->input.labels;
    const std::vector<std::string> rows(labels.begin() + 2, labels.begin() + 5);
    const std::vector<std::string> cols(labels.begin() + 1, labels.begin() + 5);
    const Matrix part = map.block(2, 1, 3, 4);
    const std::string csv = dir.file("part.csv");
    export_head_map(*run, 0, 1, MapFormat::csv, csv, MapLook{}, region);
    CHECK(read_bytes(csv) == map_csv(part, rows, cols));

    const std::string npy = dir.file("part.npy");
    export_head_map(*run, 0, 1, MapFormat::npy, npy, MapLook{}, region);
    const std::vector<std::byte> expected = map_npy(part);
    CHECK(read_bytes(npy) == std::string(reinterpret_cast<const char*>(expected.data()), expected.size()));

    // With the causal mask on, the part's mask is the run's mask cut the same way.
    REQUIRE(run->trace.mask.has_value());
    const Mask allowed = run->trace.mask->block(2, 1, 3, 4);
    const std::string title = "builtin:toy-text: head 0.1, queries 2..4, keys 1..4";
    const std::string svg = dir.file("part.svg");
    export_head_map(*run, 0, 1, MapFormat::svg, svg, MapLook{}, region);
    CHECK(read_bytes(svg) == render_matrix_svg(part, &allowed, rows, cols, title, RenderStyle{}));

    // PNG at 2x: every pixel of the 1x picture drawn as 2 x 2.
    const std::string png = dir.file("part.png");
    export_head_map(*run, 0, 1, MapFormat::png, png, MapLook{Colormap::viridis, false, 2}, region);
    const std::vector<std::byte> twice =
        encode_png(enlarged(render_matrix(part, &allowed, rows, cols, title, RenderStyle{}), 2));
    CHECK(read_bytes(png) == std::string(reinterpret_cast<const char*>(twice.data()), twice.size()));

    CHECK_THROWS_WITH_AS(export_head_map(*run, 0, 1, MapFormat::csv, csv, MapLook{}, MapRegion{5, 0, 3, 1}),
                         "export: rows 5+3, columns 0+1 are not inside the 6 x 6 map", headscope::Error);
}

TEST_CASE("export map: the format a file name's extension names, in any case") {
    CHECK(format_of_path("/tmp/a.SVG") == MapFormat::svg);
    CHECK(format_of_path("map.npy") == MapFormat::npy);
    CHECK(format_of_path("map.Png") == MapFormat::png);
    CHECK_FALSE(format_of_path("map.txt").has_value());
    CHECK_FALSE(format_of_path("csv").has_value());
}

TEST_CASE("export: every head of the run as one safetensors file, as dump lays it out") {
    const auto kept = decoder_run(false);
    for (const bool streamed : {false, true}) {
        CAPTURE(streamed);
        const auto run = streamed ? decoder_run(true) : kept;
        CHECK(run->maps_streamed == streamed);
        TempDir dir;
        const std::string path = dir.file("heads.safetensors");
        const std::uint64_t written = write_run_file(*run, path);
        CHECK(written == std::filesystem::file_size(path));
        const SafetensorsFile file = SafetensorsFile::open(path);
        const auto T = static_cast<std::int64_t>(run->input.labels.size());
        const int heads = run->info.n_heads;
        for (int l = 0; l < run->info.n_layers; ++l) {
            const TensorView& entry = file.get("attn." + std::to_string(l));
            CHECK(entry.shape == Shape{heads, T, T});
            const std::vector<float> values = entry.to_floats();
            for (int h = 0; h < heads; ++h) {
                const Matrix& map = *kept->head_map(l, h);   // a streamed run's maps are the kept run's
                CHECK(std::equal(map.data(), map.data() + T * T, values.begin() + h * T * T));
            }
        }
        CHECK(file.get("input_ids").shape == Shape{T});
        // Every row's logits, where a streamed run kept the last row only.
        const TensorView& logits = file.get("logits");
        REQUIRE(logits.shape == Shape{T, run->info.n_outputs});
        REQUIRE(kept->trace.logits.rows() == T);
        const std::vector<float> values = logits.to_floats();
        CHECK(std::equal(values.begin(), values.end(), kept->trace.logits.data()));
        CHECK(file.metadata().at("tokens") == nlohmann::json(run->input.labels).dump());
        CHECK(file.metadata().at("causal") == "on");
    }
    // Stopped half-way: nothing left behind.
    TempDir dir;
    std::atomic<bool> stop{true};
    LoadControl control;
    control.cancel = &stop;
    CHECK_THROWS_AS(write_run_file(*kept, dir.file("stopped.safetensors"), control), LoadCancelled);
    CHECK_FALSE(std::filesystem::exists(dir.file("stopped.safetensors")));
}

TEST_CASE("export: the Heads table as analyze's CSV, the importance column when scanned") {
    const auto run = toy_run();
    TempDir dir;
    const std::string path = dir.file("metrics.csv");
    export_heads_table(*run, nullptr, path);
    const std::string csv = read_bytes(path);
    CHECK(csv.rfind("layer,head,entropy,", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + run->info.n_layers * run->info.n_heads);
    ImportanceScan scan;
    scan.effect = Matrix::Constant(run->info.n_layers, run->info.n_heads, 0.25f);
    export_heads_table(*run, &scan, path);
    const std::string with_scan = read_bytes(path);
    CHECK(with_scan.substr(0, with_scan.find('\n')).find(",importance_") != std::string::npos);
    CHECK(with_scan.find(",0.25\n") != std::string::npos);
}
