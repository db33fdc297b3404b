// A run's maps before its numbers (ComputeControl::on_maps): a window shows a switched
// head's maps as soon as the forward is done, and the metrics of the layers computed, a
// decoder's head over every position but the last, and the output change follow. The
// early snapshot shares the run (layers, the kept residual stream) with the one compute()
// returns, lacks only those numbers, and the final one equals a session's that handed
// nothing on early.

#include "core/analysis/ablation_effects.h"
#include "session/export_map.h"
#include "session/model_session.h"
#include "session/predictions.h"
#include "session_support.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::session;

namespace {

using test::session_on;

Request story_request() {
    Request r;
    r.model.name = "builtin:tiny-story";
    r.input.text = "the cat sat on the mat because the cat was tired";
    return r;
}

}   // namespace

TEST_CASE("session: a switched head's maps come first, sharing the run, and its numbers follow") {
    Request r = story_request();
    ModelSession session = session_on(r.model);
    ModelSession plain = session_on(r.model);   // hands nothing on early
    std::vector<std::shared_ptr<const Snapshot>> early;
    ComputeControl control;
    control.on_maps = [&](std::shared_ptr<const Snapshot> maps) { early.push_back(std::move(maps)); };
    control.maps_first_above = 0.0;   // at any size: the demo model's numbers take microseconds

    const auto intact = session.compute(r, 1, control);
    const auto plain_intact = plain.compute(r, 1);
    // A run with every head on has its metrics still to measure: its maps came first too.
    REQUIRE(early.size() == 1);
    CHECK(early[0]->numbers_pending);
    CHECK(early[0]->metrics.empty());
    CHECK(!intact->numbers_pending);
    // The head over every position waited for the maps, but for the last row (the one the
    // predictions show); another row asked for meanwhile is computed from the hidden state,
    // the same numbers. The final snapshot holds every row, as the plain session's.
    const Eigen::Index T = intact->trace.hidden.rows();
    CHECK(early[0]->trace.logits.rows() == 1);
    REQUIRE(intact->trace.logits.rows() == T);
    CHECK(intact->trace.logits.get() == plain_intact->trace.logits.get());
    CHECK(early[0]->logit_rows() == T);
    for (int row = 0; row < static_cast<int>(T); ++row) {
        CAPTURE(row);
        CHECK(early[0]->logits_row(early[0]->trace, row) == intact->trace.logits.row(row));
        CHECK(early[0]->logits_kept(early[0]->trace, row) == (row == T - 1));
        CHECK(intact->logits_kept(intact->trace, row));
    }
    // The predictions panel leaves a pinned earlier row for the numbers rather than compute
    // it on the window's thread; the last row is there at once, and every row once they are in.
    const PredictionTable waiting = prediction_table(*early[0], 0, 5);
    CHECK(waiting.waiting);
    CHECK(waiting.shown.empty());
    const PredictionTable last_row = prediction_table(*early[0], static_cast<int>(T) - 1, 5);
    CHECK_FALSE(last_row.waiting);
    CHECK(last_row.shown.size() == 5);
    const PredictionTable first_row = prediction_table(*intact, 0, 5);
    CHECK_FALSE(first_row.waiting);
    CHECK(first_row.shown.size() == 5);
    CHECK(predictions_tsv({waiting}) == predictions_tsv({PredictionTable{}}));   // nothing to copy yet

    const Eigen::Index L = intact->info.n_layers;
    const Eigen::Index H = intact->info.n_heads;
    r.disabled_heads = HeadMask(L, H);
    r.disabled_heads.set(1, 0);
    const auto off = session.compute(r, 2, control);
    const auto expected = plain.compute(r, 2);
    REQUIRE(early.size() == 2);
    const Snapshot& maps = *early[1];
    CHECK(maps.generation == 2);
    CHECK(maps.numbers_pending);
    CHECK(!off->numbers_pending);
    // The run itself, shared: every layer, the logits, the residual stream kept.
    CHECK(maps.resumed_at == 1);
    for (std::size_t l = 0; l < static_cast<std::size_t>(L); ++l) CHECK(off->trace.layers.shares(l, maps.trace.layers));
    CHECK(maps.trace.logits.rows() == 1);
    CHECK(off->trace.logits.rows() == T);
    REQUIRE(off->trace.layer_inputs.size() == static_cast<std::size_t>(L));
    CHECK(off->trace.layer_inputs[1].shares(maps.trace.layer_inputs[1]));
    CHECK(maps.intact == off->intact);
    CHECK(maps.intact_logits == off->intact_logits);
    // What came later: the metrics of the layers computed (those before it were the last
    // run's already) and the output change.
    CHECK(maps.metrics.size() == static_cast<std::size_t>(1 * H));
    CHECK(!maps.effect.has_value());
    REQUIRE(off->effect.has_value());
    REQUIRE(expected->effect.has_value());
    CHECK(off->effect->measure == EffectMeasure::kl_divergence);
    CHECK(off->effect->value == expected->effect->value);
    CHECK(off->effect->value > 0.0);
    REQUIRE(off->metrics.size() == expected->metrics.size());
    REQUIRE(off->metrics.size() == static_cast<std::size_t>(L * H));
    for (std::size_t n = 0; n < off->metrics.size(); ++n) {
        CAPTURE(n);
        CHECK(off->metrics[n].layer == expected->metrics[n].layer);
        CHECK(off->metrics[n].head == expected->metrics[n].head);
        CHECK(off->metrics[n].entropy == expected->metrics[n].entropy);
        CHECK(off->metrics[n].prev_token == expected->metrics[n].prev_token);
    }
    for (std::size_t n = 0; n < maps.metrics.size(); ++n) CHECK(maps.metrics[n].entropy == off->metrics[n].entropy);
    CHECK(off->trace.logits.get() == expected->trace.logits.get());

    // On again: the held intact run answers, nothing is left to compute, nothing comes early.
    r.disabled_heads = {};
    const auto on = session.compute(r, 3, control);
    CHECK(early.size() == 2);
    CHECK(on->resumed_at == L);
    CHECK(on->trace.logits.shares(intact->trace.logits));
}

TEST_CASE("session: numbers under the threshold, or a view waiting for a variant run, come in one snapshot") {
    Request r = story_request();
    ModelSession session = session_on(r.model);
    int early = 0;
    ComputeControl control;
    control.on_maps = [&](const std::shared_ptr<const Snapshot>&) { ++early; };
    // The default: a demo model's numbers are far below what is worth a frame of its own.
    const auto small = session.compute(r, 1, control);
    CHECK(early == 0);
    CHECK(!small->metrics.empty());
    // A variant (the causal mask flipped, for Compare) is part of what the view shows.
    control.maps_first_above = 0.0;
    r.variants.push_back(RunVariant{.name = "flipped", .flip_causal = true});
    const auto with_variant = session.compute(r, 2, control);
    CHECK(early == 0);
    CHECK(with_variant->variant("flipped") != nullptr);
}

TEST_CASE("session: a streamed run's maps come first with the Stages layer measured, and the heads table waits") {
    Request r = story_request();
    r.maps = MapsPolicy::stream;
    r.stages_layer = 1;   // the layer that keeps its maps whole: summarised apart
    ModelSession session = session_on(r.model);
    std::shared_ptr<const Snapshot> early;
    ComputeControl control;
    control.on_maps = [&](std::shared_ptr<const Snapshot> maps) { early = std::move(maps); };
    control.maps_first_above = 0.0;
    const auto intact = session.compute(r, 1, control);
    CHECK(early == nullptr);   // streamed: the metrics landed on the way; nothing left
    r.disabled_heads = HeadMask(intact->info.n_layers, intact->info.n_heads);
    r.disabled_heads.set(0, 1);
    const auto off = session.compute(r, 2, control);
    REQUIRE(early != nullptr);   // the output change was left
    CHECK(early->maps_streamed);
    CHECK(!early->effect.has_value());
    CHECK(off->effect.has_value());
    REQUIRE(early->thumbnails.size() == off->thumbnails.size());
    REQUIRE(early->metrics.size() == off->metrics.size());
    for (std::size_t n = 0; n < off->metrics.size(); ++n) {
        CAPTURE(n);
        CHECK(early->thumbnails[n].size() != 0);   // the Stages layer's too
        CHECK(early->thumbnails[n] == off->thumbnails[n]);
        CHECK(early->metrics[n].entropy == off->metrics[n].entropy);
    }
    // The heads table is written from the whole snapshot only.
    CHECK_THROWS_WITH_AS(heads_table_csv(*early, nullptr), doctest::Contains("still being measured"), Error);
    CHECK(heads_table_csv(*off, nullptr).find("entropy") != std::string::npos);
}

TEST_CASE("session: a decoder's head waits for the maps, on a whole run and on text typed at the end") {
    Request r = story_request();
    ModelSession session = session_on(r.model);
    std::vector<std::shared_ptr<const Snapshot>> early;
    ComputeControl control;
    control.on_maps = [&](std::shared_ptr<const Snapshot> maps) { early.push_back(std::move(maps)); };
    control.maps_first_above = 0.0;
    const auto first = session.compute(r, 1, control);
    REQUIRE(early.size() == 1);
    CHECK(early[0]->trace.logits.rows() == 1);
    // Typed at the end: the run reuses the positions before; with the maps comes the last
    // row, then the reused rows copied from the last run and the other new ones computed.
    r.input.text += " and slept";
    const auto typed = session.compute(r, 2, control);
    REQUIRE(early.size() == 2);
    const Eigen::Index p = typed->reused_positions;
    const Eigen::Index T = typed->trace.hidden.rows();
    REQUIRE(p > 0);
    REQUIRE(T - p >= 2);   // a new row computed after the maps, besides the last
    CHECK(early[1]->trace.logits.rows() == 1);
    CHECK(early[1]->trace.logits.get() == typed->trace.logits.get().bottomRows(1));
    REQUIRE(typed->trace.logits.rows() == T);
    CHECK(typed->trace.logits.get().topRows(p) == first->trace.logits.get().topRows(p));
    // Every row as a session that computed the typed text whole, in one run, gives it.
    ModelSession whole_text = session_on(r.model);
    const Matrix expected = whole_text.compute(r, 1)->trace.logits.get();
    CHECK(typed->trace.logits.get().isApprox(expected, 1e-5f));
    // Under the threshold (a short input's head takes microseconds): computed in the forward.
    ModelSession small = session_on(r.model);
    ComputeControl quiet;
    quiet.on_maps = control.on_maps;
    const auto whole = small.compute(r, 1, quiet);
    CHECK(early.size() == 2);
    CHECK(whole->trace.logits.rows() == whole->trace.hidden.rows());
}

TEST_CASE("session: a model that computes every row of typed text leaves its head for after the maps too") {
    // Dynamic NTK turns every position by angles that depend on the length: the model
    // takes no kept positions (ModelInfo::reuses_prefix), so its typed run is a whole run.
    Request r;
    r.model.name = HEADSCOPE_SOURCE_DIR;   // appended: GCC 12 mis-warns on a literal + std::string
    r.model.name += "/tests/checkpoints/llama_tiny_dynamic";
    r.input.ids_typed = true;
    r.input.text = "5, 42, 79, 116, 153, 190, 27, 64, 101";
    ModelSession session = session_on(r.model);
    REQUIRE_FALSE(session.model()->info().reuses_prefix);
    std::vector<std::shared_ptr<const Snapshot>> early;
    ComputeControl control;
    control.on_maps = [&](std::shared_ptr<const Snapshot> maps) { early.push_back(std::move(maps)); };
    control.maps_first_above = 0.0;
    (void)session.compute(r, 1, control);
    r.input.text += ", 138";
    const auto typed = session.compute(r, 2, control);
    REQUIRE(early.size() == 2);
    CHECK(typed->reused_positions == 0);
    CHECK(early[1]->trace.logits.rows() == 1);   // the last row, with the maps
    CHECK(typed->trace.logits.rows() == 10);
    ModelSession plain = session_on(r.model);
    CHECK(typed->trace.logits.get() == plain.compute(r, 1)->trace.logits.get());

    // A stack without such positions reuses them, the demo encoder too once made causal.
    Request toy;
    toy.model.name = "builtin:toy-text";
    toy.causal = true;
    toy.input.text = "the cat sat on the mat";
    ModelSession toy_session = session_on(toy.model);
    CHECK(toy_session.model()->info().reuses_prefix);
    (void)toy_session.compute(toy, 1);
    toy.input.text += " again";
    CHECK(toy_session.compute(toy, 2)->reused_positions == 6);
}

TEST_CASE("session: a request that comes while the head's rows are still to compute stops them") {
    Request r = story_request();
    ModelSession session = session_on(r.model);
    std::atomic<bool> cancel{false};
    std::shared_ptr<const Snapshot> early;
    ComputeControl control;
    control.cancel = &cancel;
    control.maps_first_above = 0.0;
    control.on_maps = [&](std::shared_ptr<const Snapshot> maps) {
        early = std::move(maps);
        cancel = true;   // a newer request, once the maps are up
    };
    CHECK_THROWS_AS((void)session.compute(r, 1, control), ComputeCancelled);
    REQUIRE(early != nullptr);
    CHECK(early->trace.logits.rows() == 1);
    // Nothing of it was kept: the next run computes from the start, every row.
    cancel = false;
    control.on_maps = nullptr;
    const auto again = session.compute(r, 2, control);
    CHECK(again->resumed_at == 0);
    CHECK(again->trace.logits.rows() == again->trace.hidden.rows());
}
