// The compute plan (session/compute_plan.h): which layers or positions of the last run a
// new request reuses, case by case, on hand-made keys and options.

#include "session/compute_plan.h"

#include <doctest/doctest.h>

using namespace headscope;
using namespace headscope::session;

namespace {

constexpr Eigen::Index n_layers = 4;

// A trace that kept every layer's input, as the worker's runs do.
ModelTrace kept_trace() {
    ModelTrace trace;
    trace.layer_inputs.resize(static_cast<std::size_t>(n_layers));
    return trace;
}

RunKey key_of(std::initializer_list<float> rows, bool causal = true) {
    Matrix embeddings(static_cast<Eigen::Index>(rows.size()), 2);
    Eigen::Index i = 0;
    for (const float v : rows) embeddings.row(i++) << v, -v;
    return RunKey{embeddings, causal, {}, {}, {}};
}

HeadMask off(int layer, int head) {
    HeadMask flags(n_layers, 2);
    flags.set(layer, head);
    return flags;
}

}   // namespace

TEST_CASE("compute plan: the same input resumes at the first changed layer, or at the stages layer") {
    const RunKey key = key_of({1, 2, 3});
    const ModelTrace trace = kept_trace();
    RunOptions before;
    before.disabled_heads = off(3, 0);
    const LastRun last{&key, &before, &trace};

    RunOptions now;
    now.disabled_heads = off(1, 0);
    ReusePlan plan = plan_reuse(last, key, now, n_layers);
    CHECK(plan.resume);
    CHECK(plan.resume_layer == 1);
    CHECK(plan.prefix_rows == 0);

    // Nothing changed: the last layer is redone (the run needs one layer to produce its output).
    plan = plan_reuse(last, key, before, n_layers);
    CHECK(plan.resume);
    CHECK(plan.resume_layer == n_layers - 1);

    // The Stages view opened on layer 0: that layer's stages are new.
    RunOptions stages = before;
    stages.stages_layer = 0;
    CHECK(plan_reuse(last, key, stages, n_layers).resume_layer == 0);

    RunOptions applied;
    apply_reuse(plan, last, applied);
    CHECK(applied.resume_from == &trace);
    CHECK(applied.resume_layer == n_layers - 1);
    CHECK(applied.prefix_from == nullptr);
}

TEST_CASE("compute plan: text typed at the end of a causal input reuses the unchanged positions") {
    const RunKey before_key = key_of({1, 2, 3});
    const ModelTrace trace = kept_trace();
    const RunOptions options;
    const LastRun last{&before_key, &options, &trace};

    ReusePlan plan = plan_reuse(last, key_of({1, 2, 3, 4, 5}), options, n_layers);
    CHECK_FALSE(plan.resume);
    CHECK(plan.prefix_rows == 3);
    // Edited in the middle: only the positions before the edit.
    CHECK(plan_reuse(last, key_of({1, 9, 3, 4}), options, n_layers).prefix_rows == 1);
    // A shorter input, or one changed at its first position: nothing to reuse.
    CHECK(plan_reuse(last, key_of({1, 2}), options, n_layers).prefix_rows == 0);
    CHECK(plan_reuse(last, key_of({7, 2, 3, 4}), options, n_layers).prefix_rows == 0);

    RunOptions applied;
    apply_reuse(plan, last, applied);
    CHECK(applied.prefix_from == &trace);
    CHECK(applied.prefix_rows == 3);
    CHECK(applied.resume_from == nullptr);
}

TEST_CASE("compute plan: no reuse without a causal mask, with a custom mask, other heads, or no kept layers") {
    const RunKey before_key = key_of({1, 2, 3}, false);
    const ModelTrace trace = kept_trace();
    const RunOptions options;
    const LastRun last{&before_key, &options, &trace};
    // Bidirectional: every position sees the new ones.
    CHECK(plan_reuse(last, key_of({1, 2, 3, 4}, false), options, n_layers).prefix_rows == 0);

    const RunKey causal_key = key_of({1, 2, 3});
    const LastRun causal_last{&causal_key, &options, &trace};
    RunKey masked = key_of({1, 2, 3, 4});
    masked.forbidden = {{3, 0}};
    CHECK(plan_reuse(causal_last, masked, options, n_layers).prefix_rows == 0);
    RunOptions other_heads;
    other_heads.disabled_heads = off(0, 0);
    CHECK(plan_reuse(causal_last, key_of({1, 2, 3, 4}), other_heads, n_layers).prefix_rows == 0);

    const ModelTrace not_kept;
    const LastRun without_inputs{&causal_key, &options, &not_kept};
    const ReusePlan none = plan_reuse(without_inputs, causal_key, options, n_layers);
    CHECK_FALSE(none.resume);
    CHECK(none.prefix_rows == 0);
    CHECK_FALSE(plan_reuse(LastRun{}, causal_key, options, n_layers).resume);
}

TEST_CASE("compute plan: the input key names the model and changes with the embeddings and the mask") {
    ModelChoice model;
    const std::string a = input_key_text(model, key_of({1, 2, 3}));
    CHECK(a.rfind(model.name + " ", 0) == 0);
    CHECK(a == input_key_text(model, key_of({1, 2, 3})));
    CHECK(a != input_key_text(model, key_of({1, 2, 4})));
    CHECK(a != input_key_text(model, key_of({1, 2, 3}, false)));
    RunKey masked = key_of({1, 2, 3});
    masked.forbidden = {{2, 0}};
    CHECK(a != input_key_text(model, masked));
    // An encoder-decoder's source: the same target over another source is another input,
    // and "5,6" + "" is not "5" + "6".
    RunKey sourced = key_of({1, 2, 3});
    sourced.source_ids = {5, 6};
    CHECK(a != input_key_text(model, sourced));
    RunKey other_source = sourced;
    other_source.source_ids = {5, 7};
    CHECK(input_key_text(model, sourced) != input_key_text(model, other_source));
    CHECK(!(sourced == other_source));
    model.config.seed = 7;
    CHECK(a != input_key_text(model, key_of({1, 2, 3})));
}
