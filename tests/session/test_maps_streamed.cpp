// A long input in the window (session/model_session.h with Request::maps): a run that
// streams its maps gives the views the same maps, bit for bit, and the same metrics as one
// that keeps them, plus a thumbnail per head; the intact, flipped and second-input runs
// stream too; toggling a head resumes the streamed run; a computation reports each layer
// (handing on the thumbnails landed so far) and stops when asked, and the session computes
// on afterwards; the window's decoder keeps its last row's logits and computes another
// row's when shown.

#include "core/analysis/ablation_effects.h"
#include "core/analysis/head_summary.h"
#include "core/analysis/rollout.h"
#include "session/model_session.h"
#include "session/predictions.h"
#include "session_support.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::session;

namespace {

const std::string checkpoints = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/";

using test::session_on;

Request request_for(const std::string& model, MapsPolicy maps) {
    Request r;
    r.model.name = model;
    // Token ids within every fixture's vocabulary; words for the demo model.
    const bool demo = model.rfind("builtin:", 0) == 0;
    r.input.text =
        demo ? "the cat sat on the mat because the cat was tired of the dog" : "5, 12, 7, 30, 9, 14, 22, 5, 12, 8, 19";
    r.input.ids_typed = !demo;
    r.maps = maps;
    return r;
}

void check_same_metrics(const HeadMetrics& a, const HeadMetrics& b) {
    CHECK(a.layer == b.layer);
    CHECK(a.head == b.head);
    CHECK(a.entropy == b.entropy);
    CHECK(a.max_weight == b.max_weight);
    CHECK(a.mean_distance == b.mean_distance);
    CHECK(a.prev_token == b.prev_token);
    CHECK(a.sink_mass == b.sink_mass);
    CHECK(a.induction == b.induction);
}

// Every head's map of `run` in `streamed` equals the one `kept` holds in `kept_run`.
void check_same_maps(const Snapshot& streamed, const ModelTrace& run, const Snapshot& kept,
                     const ModelTrace& kept_run) {
    for (int l = 0; l < static_cast<int>(kept.info.n_layers); ++l) {
        for (int h = 0; h < static_cast<int>(kept.info.n_heads); ++h) {
            CAPTURE(l);
            CAPTURE(h);
            CHECK(*streamed.map_of(run, l, h) == *kept.map_of(kept_run, l, h));
        }
    }
}

}   // namespace

TEST_CASE("streamed maps: the views' maps, metrics and every extra run equal a run that keeps its maps") {
    for (const std::string& model :
         std::vector<std::string>{"builtin:toy-text", checkpoints + "qwen2_tiny", checkpoints + "gemma2_tiny"}) {
        CAPTURE(model);
        Request keep = request_for(model, MapsPolicy::keep);
        keep.disabled_heads = {};
        ModelSession kept_session = session_on(keep.model);
        const auto probe = kept_session.compute(keep, 1);
        const ModelInfo info = probe->info;
        keep.disabled_heads = HeadMask(info.n_layers, info.n_heads);
        keep.disabled_heads.set(0, 1);
        RunVariant other{.name = "input B"};
        other.input = keep.input;
        other.input.text = keep.input.ids_typed ? "7, 8, 9, 10, 11" : "a dog ran after the cat";
        keep.variants = {{.name = "flipped", .flip_causal = true}, other};
        Request stream = keep;
        stream.maps = MapsPolicy::stream;
        ModelSession streamed_session = session_on(stream.model);
        const auto kept = kept_session.compute(keep, 2);
        const auto streamed = streamed_session.compute(stream, 1);
        CHECK_FALSE(kept->maps_streamed);
        REQUIRE(streamed->maps_streamed);
        CHECK(streamed->trace.layers[0].heads[0].weights.size() == 0);   // no map held
        check_same_maps(*streamed, streamed->trace, *kept, kept->trace);
        check_same_maps(*streamed, *streamed->intact, *kept, *kept->intact);
        for (const char* variant : {"flipped", "input B"}) {
            REQUIRE(kept->variant(variant)->trace);
            REQUIRE(streamed->variant(variant)->trace);
            check_same_maps(*streamed, *streamed->variant(variant)->trace, *kept, *kept->variant(variant)->trace);
        }
        CHECK(streamed->trace.logits.get() == kept->trace.logits.get());
        REQUIRE(streamed->effect.has_value());
        CHECK(streamed->effect->value == kept->effect->value);
        REQUIRE(streamed->metrics.size() == kept->metrics.size());
        REQUIRE(streamed->thumbnails.size() == kept->metrics.size());
        const Mask* mask = kept->trace.mask ? &*kept->trace.mask : nullptr;
        for (std::size_t n = 0; n < kept->metrics.size(); ++n) {
            check_same_metrics(streamed->metrics[n], kept->metrics[n]);
            const auto l = static_cast<int>(n / static_cast<std::size_t>(info.n_heads));
            const auto h = static_cast<int>(n % static_cast<std::size_t>(info.n_heads));
            CHECK(streamed->thumbnails[n] ==
                  summarize_head(*kept->head_map(l, h), mask, MetricContext{}, l, h).pooled_max);
        }
        // Rollout reads a streamed run's maps layer by layer, the same numbers.
        const RolloutOptions options;
        CHECK(attention_rollout(HeadMaps(streamed->trace, streamed->model_ref.get()), options) ==
              attention_rollout(kept->trace, options));
        CHECK(streamed->kept_bytes() < kept->kept_bytes() * 4);
    }
}

TEST_CASE("streamed maps: toggling a head resumes the streamed run, the Stages layer keeps its maps") {
    Request r = request_for(checkpoints + "llama_tiny", MapsPolicy::stream);
    ModelSession session = session_on(r.model);
    const auto first = session.compute(r, 1);
    const ModelInfo info = first->info;
    r.disabled_heads = HeadMask(info.n_layers, info.n_heads);
    r.disabled_heads.set(r.disabled_heads.layers() - 1, 0);
    r.stages_layer = static_cast<int>(info.n_layers) - 1;
    const auto toggled = session.compute(r, 2);
    CHECK(toggled->resumed_at == info.n_layers - 1);
    CHECK(toggled->trace.layers.back().heads[0].scores.size() != 0);   // the Stages view's layer, whole

    Request fresh_request = r;
    fresh_request.maps = MapsPolicy::keep;
    ModelSession fresh_session = session_on(r.model);
    const auto fresh = fresh_session.compute(fresh_request, 1);
    check_same_maps(*toggled, toggled->trace, *fresh, fresh->trace);
    REQUIRE(toggled->metrics.size() == fresh->metrics.size());
    for (std::size_t n = 0; n < fresh->metrics.size(); ++n) check_same_metrics(toggled->metrics[n], fresh->metrics[n]);
    CHECK(toggled->trace.logits.get() == fresh->trace.logits.get());
}

TEST_CASE("a head switched off after a run with every head on: that run is the intact one, not run again") {
    for (const MapsPolicy maps : {MapsPolicy::keep, MapsPolicy::stream}) {
        Request r = request_for(checkpoints + "gpt2_tiny", maps);
        ModelSession session = session_on(r.model);
        const auto intact = session.compute(r, 1);
        r.disabled_heads = HeadMask(intact->info.n_layers, intact->info.n_heads);
        r.disabled_heads.set(1, 0);
        const auto ablated = session.compute(r, 2);
        REQUIRE(ablated->intact);
        CHECK(ablated->intact.get() == &intact->trace);   // the very run, shared
        // Its output change equals the one against an intact run made afresh.
        ModelSession fresh = session_on(r.model);
        const auto fresh_ablated = fresh.compute(r, 1);
        REQUIRE(fresh_ablated->effect.has_value());
        CHECK(ablated->effect->value == fresh_ablated->effect->value);
        check_same_maps(*ablated, *ablated->intact, *fresh_ablated, *fresh_ablated->intact);
        // After a custom mask, the run before no longer matches: the intact run is its own.
        r.forbidden = {{3, 1}};
        const auto masked = session.compute(r, 3);
        CHECK(masked->intact.get() != &ablated->trace);
        CHECK(masked->intact.get() != &intact->trace);
    }
}

TEST_CASE("streamed maps: the window's decoder keeps its last row's logits, computes the others when shown") {
    Request keep = request_for(checkpoints + "qwen2_tiny", MapsPolicy::keep);
    keep.keeps.logits_when_shown = true;
    ModelSession kept_session = session_on(keep.model);
    const ModelInfo info = kept_session.compute(keep, 1)->info;
    keep.disabled_heads = HeadMask(info.n_layers, info.n_heads);
    keep.disabled_heads.set(0, 1);
    Request stream = keep;
    stream.maps = MapsPolicy::stream;
    ModelSession streamed_session = session_on(stream.model);
    const auto kept = kept_session.compute(keep, 2);
    const auto streamed = streamed_session.compute(stream, 1);
    const Eigen::Index T = kept->trace.logits.rows();
    CHECK(T == 11);   // kept: every row (the maps kept too, so the logits are small beside them)
    CHECK(streamed->trace.logits.rows() == 1);
    CHECK(streamed->intact->logits.rows() == 1);
    CHECK(streamed->logit_rows() == T);
    CHECK(streamed->trace.logits.get() == kept->trace.logits.get().bottomRows(1));
    for (int row = 0; row < T; ++row) {
        CAPTURE(row);
        CHECK(streamed->logits_row(streamed->trace, row) == kept->trace.logits.get().row(row));
        CHECK(streamed->logits_row(*streamed->intact, row) == kept->intact->logits.row(row));
        const PredictionTable a = prediction_table(*streamed, row, 5);
        const PredictionTable b = prediction_table(*kept, row, 5);
        REQUIRE(a.shown.size() == b.shown.size());
        REQUIRE(a.intact.size() == b.intact.size());
        REQUIRE_FALSE(a.intact.empty());
        for (std::size_t i = 0; i < a.shown.size(); ++i) {
            CHECK(a.shown[i].index == b.shown[i].index);
            CHECK(a.shown[i].probability == b.shown[i].probability);
            CHECK(a.intact[i].index == b.intact[i].index);
            CHECK(a.intact[i].other == b.intact[i].other);
        }
    }
    CHECK(streamed->logits_row(streamed->trace, static_cast<int>(T)).size() == 0);
    const PredictionTarget target = prediction_target(*streamed, -1);
    CHECK(target.kind == PredictionKind::next_token);
    CHECK(target.rows == std::vector<int>{static_cast<int>(T) - 1});
    // The output change: at the last position, the one row both runs kept.
    REQUIRE(streamed->effect.has_value());
    CHECK(streamed->effect->value ==
          doctest::Approx(mean_kl_divergence(kept->intact->logits.bottomRows(1), kept->trace.logits.bottomRows(1))));
}

TEST_CASE("streamed maps: automatic keeps the maps of a short input, streams past the limit") {
    ModelInfo info;
    info.n_layers = 16;
    info.n_heads = 32;
    CHECK_FALSE(streams_maps(MapsPolicy::automatic, info, 256));   // 0.5 GiB
    CHECK(streams_maps(MapsPolicy::automatic, info, 1024));        // 8 GiB
    CHECK_FALSE(streams_maps(MapsPolicy::keep, info, 4096));
    CHECK(streams_maps(MapsPolicy::stream, info, 4));
}

TEST_CASE("streamed maps: a computation reports each layer, stops when asked, and the session computes on") {
    Request r = request_for(checkpoints + "gemma2_tiny", MapsPolicy::stream);
    ModelSession session = session_on(r.model);
    std::atomic<bool> cancel{false};
    std::vector<ComputeProgress> seen;
    ComputeControl control;
    control.cancel = &cancel;
    control.on_progress = [&](const ComputeProgress& p) {
        seen.push_back(p);
        if (p.layers_done == 2) cancel.store(true);
    };
    CHECK_THROWS_AS(session.compute(r, 1, control), ComputeCancelled);
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].layers_done == 1);
    CHECK(seen[0].n_layers == 4);
    CHECK(seen[0].run.empty());
    cancel.store(false);
    seen.clear();
    r.disabled_heads = HeadMask(4, 4);
    r.disabled_heads.set(0, 0);
    control.on_progress = [&](const ComputeProgress& p) { seen.push_back(p); };
    const auto done = session.compute(r, 2, control);
    CHECK(done->resumed_at == 0);   // nothing of the stopped run was kept
    REQUIRE(seen.size() == 8);      // the run, then the intact run
    CHECK(seen[3].run.empty());
    CHECK(seen[4].run == "intact");
    CHECK(seen[7].layers_done == 4);
    // The main run's thumbnails and metrics land layer by layer (the views fill in as they
    // come), each the finished run's; the intact run's progress carries none.
    for (std::size_t i = 0; i < 4; ++i) {
        CAPTURE(i);
        REQUIRE(seen[i].landed_thumbnails);
        CHECK(seen[i].model == r.model.name);
        const std::vector<Matrix>& landed = *seen[i].landed_thumbnails;
        REQUIRE(static_cast<Eigen::Index>(landed.size()) == seen[i].layers_done * 4);
        for (std::size_t n = 0; n < landed.size(); ++n) CHECK(landed[n] == done->thumbnails[n]);
        REQUIRE(seen[i].landed_metrics);
        const std::vector<HeadMetrics>& measured = *seen[i].landed_metrics;
        REQUIRE(measured.size() == landed.size());
        for (std::size_t n = 0; n < measured.size(); ++n) CHECK(measured[n] == done->metrics[n]);
    }
    CHECK_FALSE(seen[4].landed_thumbnails);
    CHECK_FALSE(seen[4].landed_metrics);
}
