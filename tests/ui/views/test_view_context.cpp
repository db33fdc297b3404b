// What a view reads through ViewContext (ui/views/view_context.h) while a long run lands:
// the layers done so far over the last result, and only for the model shown.

#include "ui/views/view_context.h"

#include <doctest/doctest.h>

using namespace headscope;
using namespace headscope::ui;

namespace {

HeadMetrics with_entropy(int layer, int head, double entropy) {
    HeadMetrics m;
    m.layer = layer;
    m.head = head;
    m.entropy = entropy;
    return m;
}

// Two layers of two heads shown, entropies 1..4; a run of the same model with its first
// layer landed, entropies 10 and 11.
struct Landing {
    std::shared_ptr<session::Snapshot> shown = std::make_shared<session::Snapshot>();
    std::optional<session::ComputeProgress> computing = session::ComputeProgress{};
    session::AppState state;
    TexturePool textures;
    session::BackgroundJobs scan_jobs;
    session::BackgroundJobs view_jobs;

    Landing() {
        shown->model.name = "/models/llama";
        shown->info.n_layers = 2;
        shown->info.n_heads = 2;
        shown->metrics = {with_entropy(0, 0, 1), with_entropy(0, 1, 2), with_entropy(1, 0, 3), with_entropy(1, 1, 4)};
        computing->model = shown->model.name;
        computing->n_layers = 2;
        computing->layers_done = 1;
        computing->landed_thumbnails = std::make_shared<const std::vector<Matrix>>(2, Matrix::Ones(2, 2));
        computing->landed_metrics = std::make_shared<const std::vector<HeadMetrics>>(
            std::vector<HeadMetrics>{with_entropy(0, 0, 10), with_entropy(0, 1, 11)});
    }
    ViewContext context() {
        ViewContext made(shown, state, textures, scan_jobs, view_jobs, {});
        made.set_computing(&computing);
        return made;
    }
};

std::vector<double> entropies(const std::vector<HeadMetrics>& metrics) {
    std::vector<double> values;
    for (const HeadMetrics& m : metrics) values.push_back(m.entropy);
    return values;
}

}   // namespace

TEST_CASE("view context: a long run's landed layers show over the last result") {
    Landing landing;
    ViewContext context = landing.context();
    REQUIRE(context.landing() != nullptr);
    CHECK(entropies(context.head_metrics()) == std::vector<double>{10, 11, 3, 4});
    CHECK(entropies(landing.shown->metrics) == std::vector<double>{1, 2, 3, 4});   // the snapshot is not touched
}

TEST_CASE("view context: nothing lands from another model's run, or a run of another shape") {
    Landing other_model;
    other_model.computing->model = "/models/qwen";
    ViewContext context = other_model.context();
    CHECK(context.landing() == nullptr);
    CHECK(entropies(context.head_metrics()) == std::vector<double>{1, 2, 3, 4});

    Landing other_shape;
    other_shape.computing->n_layers = 3;
    CHECK(other_shape.context().landing() == nullptr);

    Landing torn;   // thumbnails and metrics of different layers: not a landing
    torn.computing->layers_done = 2;
    CHECK(torn.context().landing() == nullptr);

    Landing idle;
    idle.computing.reset();
    CHECK(entropies(idle.context().head_metrics()) == std::vector<double>{1, 2, 3, 4});
}
