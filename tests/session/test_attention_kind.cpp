// The window's choices for an encoder-decoder (session/app_state.h: the target, Generate,
// the kind shown, each kind's heads off) through the one request path, and the run seen
// as one kind's maps (session/attention_kind.h: kind_snapshot), on the tiny T5 checkpoint
// of tools/make_seq2seq_checkpoints.py.

#include "core/analysis/head_metrics.h"
#include "core/base/error.h"
#include "session/app_state.h"
#include "session/attention_kind.h"
#include "session/model_session.h"
#include "session/session_file.h"
#include "session/undo_history.h"
#include "session_support.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

using namespace headscope;
using namespace headscope::session;

namespace {

const std::string t5 = std::string(HEADSCOPE_SOURCE_DIR) + "/tests/checkpoints/t5_tiny";

// The window's state on t5_tiny, as its first result would leave it.
AppState t5_state(const ModelInfo& info) {
    AppState state;
    state.model.name = t5;
    state.text = "13, 27, 5, 8, 40, 2";   // the source (t5_tiny reads ids)
    state.text_is_ids = true;
    state.target = "0, 5, 6, 7";
    state.target_is_ids = true;
    fit_to_model(state, info);
    return state;
}

struct Run {
    std::shared_ptr<const Snapshot> snapshot;
    ModelInfo info;
};

Run run_state(ModelSession& session, const AppState& state, std::uint64_t generation) {
    const std::shared_ptr<const Snapshot> snapshot = session.compute(make_request(state), generation);
    return {snapshot, snapshot->info};
}

ModelSession t5_session() {
    ModelChoice choice;
    choice.name = t5;
    return test::session_on(choice);
}

}   // namespace

TEST_CASE("attention kinds: the window's target reaches the decoder, and each kind is seen with its own rows") {
    ModelSession session = t5_session();
    const ModelInfo info = session.model()->info();
    REQUIRE(info.encoder_decoder);
    AppState state = t5_state(info);
    const Run run = run_state(session, state, 1);
    const Snapshot& whole = *run.snapshot;
    REQUIRE(whole.input.source);
    CHECK(whole.input.ids == std::vector<std::int64_t>{0, 5, 6, 7});   // the target as typed
    CHECK(whole.input.source->ids == std::vector<std::int64_t>{13, 27, 5, 8, 40, 2});

    // The decoder kind is the run itself.
    CHECK(kind_snapshot(run.snapshot, AttentionKind::decoder) == run.snapshot);

    const auto encoder = kind_snapshot(run.snapshot, AttentionKind::encoder);
    CHECK(encoder->info.n_layers == info.encoder_layers);
    CHECK(encoder->input.labels == whole.input.source->labels);
    CHECK(encoder->key_labels.empty());
    CHECK(encoder->head_map(0, 1)->isApprox(whole.trace.encoder_layers[0].heads[1].weights, 0.0f));
    CHECK(encoder->head_map(0, 1)->rows() == 6);
    CHECK_FALSE(encoder->model_ref);
    REQUIRE(encoder->metrics.size() == static_cast<std::size_t>(info.encoder_layers * info.n_heads));
    CHECK_FALSE(encoder->metrics[0].cross);
    CHECK(encoder->input_key != whole.input_key);

    const auto cross = kind_snapshot(run.snapshot, AttentionKind::cross);
    CHECK(cross->info.n_layers == info.n_layers);
    CHECK(cross->input.labels == whole.input.labels);              // rows: the target's
    CHECK(cross->column_labels() == whole.input.source->labels);   // columns: the source's
    const std::shared_ptr<const Matrix> map = cross->head_map(1, 0);
    CHECK(map->rows() == 4);
    CHECK(map->cols() == 6);
    CHECK(*map == whole.trace.cross_layers[1].heads[0].weights);
    REQUIRE(cross->metrics.size() == static_cast<std::size_t>(info.n_layers * info.n_heads));
    const HeadMetrics& m = cross->metrics[static_cast<std::size_t>(info.n_heads)];   // head 1.0
    CHECK(m.layer == 1);
    CHECK(m.head == 0);
    CHECK(m.cross);
    HeadMetrics expected = compute_cross_metrics(*map, {});
    expected.layer = 1;
    expected.head = 0;
    CHECK(m == expected);
    CHECK(m.monotonicity.has_value());   // four target rows: three steps
    // Measured on the worker with the run (measure_kinds), not when the kind is shown: the
    // run holds them, and the kind's view shows those.
    REQUIRE(whole.cross_metrics.size() == static_cast<std::size_t>(info.n_layers * info.n_heads));
    REQUIRE(whole.encoder_metrics.size() == static_cast<std::size_t>(info.encoder_layers * info.n_heads));
    CHECK(whole.cross_metrics == cross->metrics);
    CHECK(whole.encoder_metrics == encoder->metrics);
    CHECK_FALSE(metric_value(m, Metric::prev_token).has_value());
}

TEST_CASE("attention kinds: a cross head switched off in the window's state moves the next-token logits") {
    ModelSession session = t5_session();
    const ModelInfo info = session.model()->info();
    AppState state = t5_state(info);
    const Run intact = run_state(session, state, 1);
    choose_kind(state, AttentionKind::cross, info);
    toggle_disabled(state, 0, 1);   // the kind shown's head: cross-attention 0.1
    CHECK(state.disabled_cross_heads.off(0, 1));
    CHECK_FALSE(state.disabled_heads.any());
    CHECK(make_request(state).disabled_cross_heads.off(0, 1));
    const Run ablated = run_state(session, state, 2);
    CHECK(ablated.snapshot->ablated);
    const Matrix before = intact.snapshot->logits_row(intact.snapshot->trace, 3);
    const Matrix after = ablated.snapshot->logits_row(ablated.snapshot->trace, 3);
    CHECK((before - after).cwiseAbs().maxCoeff() > 1e-4f);
    // Seen as the cross kind, the run's heads off are the cross heads, and its intact run is
    // seen as cross-attention too.
    const auto cross = kind_snapshot(ablated.snapshot, AttentionKind::cross);
    CHECK(cross->options.disabled_heads.off(0, 1));
    CHECK(cross->ablated);
    REQUIRE(cross->intact);
    CHECK(cross->map_of(*cross->intact, 1, 0)->cols() == 6);
    CHECK_FALSE(kind_snapshot(ablated.snapshot, AttentionKind::encoder)->ablated);
}

TEST_CASE("attention kinds: Generate asks greedy decoding, and a typed target wins over it") {
    AppState state;
    state.generate = 5;
    CHECK(make_request(state).input.generate == 5);
    state.target = "Hallo";
    CHECK(make_request(state).input.generate == 0);
    CHECK(make_request(state).input.target == "Hallo");
    // The window runs a model without an encoder with its target box left out, not refused.
    CHECK_FALSE(make_request(state).input.target_refused_by_other_models);
    ModelChoice story;
    story.name = "builtin:tiny-story";
    ModelSession session = test::session_on(story);
    state.model = story;
    state.text = "the cat sat";
    CHECK_NOTHROW(session.compute(make_request(state), 1));
}

TEST_CASE("attention kinds: choosing a kind clamps the layer and lets go of a query of the other sequence") {
    ModelInfo info;
    info.n_layers = 2;
    info.n_heads = 4;
    info.encoder_decoder = true;
    info.encoder_layers = 3;
    AppState state;
    fit_to_model(state, info);
    CHECK(state.disabled_encoder_heads.layers() == 3);
    CHECK(state.disabled_cross_heads.layers() == 2);
    CHECK(state.hidden_heads.layers() == 3);
    state.query = 2;
    choose_kind(state, AttentionKind::cross, info);   // target rows both
    CHECK(state.query == 2);
    choose_kind(state, AttentionKind::encoder, info);   // source rows
    CHECK(state.query == -1);
    state.layer = 2;
    CHECK(decoder_query(state) == -1);
    choose_kind(state, AttentionKind::decoder, info);
    CHECK(state.layer == 1);
    // A model without an encoder has its own kind alone.
    ModelInfo gpt;
    gpt.n_layers = 2;
    gpt.n_heads = 2;
    state.kind = AttentionKind::cross;
    fit_to_model(state, gpt);
    CHECK(state.kind == AttentionKind::decoder);
    choose_kind(state, AttentionKind::encoder, gpt);
    CHECK(state.kind == AttentionKind::decoder);
}

TEST_CASE("attention kinds: undo and sessions keep the target, Generate, the kind and each kind's heads") {
    AppState state;
    state.target = "0,5";
    state.target_is_ids = true;
    state.generate = 7;
    state.kind = AttentionKind::cross;
    state.disabled_encoder_heads = HeadMask(3, 2);
    state.disabled_cross_heads = HeadMask(2, 2);
    state.disabled_cross_heads.set(1, 1);
    const Edits edits = edits_of(state);
    AppState other;
    other.disabled_cross_heads = HeadMask(2, 2);
    restore(other, edits);
    CHECK(other.target == "0,5");
    CHECK(other.generate == 7);
    CHECK(other.disabled_cross_heads.off(1, 1));
    CHECK_FALSE(edits == edits_of(AppState{}));

    const AppState back = apply_session(session_json(state), "s.json", AppState{});
    CHECK(back.target == "0,5");
    CHECK(back.target_is_ids);
    CHECK(back.generate == 7);
    CHECK(back.kind == AttentionKind::cross);
    CHECK(back.disabled_cross_heads.off(1, 1));
    CHECK(back.disabled_encoder_heads.layers() == 3);

    std::string why;
    try {
        apply_session(R"({"headscope_session": 1, "kind": "crosss"})", "s.json", AppState{});
    } catch (const Error& e) {
        why = e.what();
    }
    CHECK(why.find("kind") != std::string::npos);
    CHECK(why.find("'crosss' is not a kind of attention (decoder, encoder, cross)") != std::string::npos);
}

TEST_CASE("attention kinds: a decoding is kept for the same source and steps, and ids-only folders read ids") {
    ModelSession session = t5_session();
    const std::shared_ptr<const Model> model = session.model();
    RunInput input;
    input.text = "13, 27, 5";
    input.generate = 3;
    GeneratedTarget kept;
    const ModelInput first = encode_run_input(*model, input, {}, &kept);
    CHECK(kept.source_ids == std::vector<std::int64_t>{13, 27, 5});
    CHECK(kept.steps == 3);
    CHECK(kept.target_ids == first.ids);
    // Asked again (a head switched in the window): what was kept, not a new decoding.
    kept.target_ids = {0, 9, 9};
    CHECK(encode_run_input(*model, input, {}, &kept).ids == std::vector<std::int64_t>{0, 9, 9});
    // Another source, or other steps: decoded again.
    input.generate = 2;
    CHECK(encode_run_input(*model, input, {}, &kept).ids != std::vector<std::int64_t>{0, 9, 9});
    CHECK(kept.steps == 2);
    // The window's target box on a folder without a tokenizer reads ids, as its source box does.
    RunInput typed;
    typed.text = "13, 27";
    typed.target = "0, 5, 6";
    CHECK(encode_run_input(*model, typed).ids == std::vector<std::int64_t>{0, 5, 6});
    typed.kind = RunInput::Kind::sentence;   // the command line's --target: text, refused without a tokenizer
    CHECK_THROWS_AS(encode_run_input(*model, typed), Error);
}

TEST_CASE("attention kinds: start choices are checked against the kind's layers and rows, each flag named") {
    ModelInfo flan;
    flan.name = "flan";
    flan.n_layers = 3;
    flan.n_heads = 3;
    flan.encoder_decoder = true;
    flan.encoder_layers = 2;
    StartChoices choices;
    choices.layer = 2;   // a decoder layer, not an encoder one
    choices.query = 5;   // a source row
    choices.disabled_encoder = {{1, 2}, {2, 0}};
    choices.disabled_cross = {{2, 2}, {0, 3}};
    const std::vector<std::string> notes = start_choice_notes(choices, flan, AttentionKind::encoder, 6);
    REQUIRE(notes.size() == 3);
    CHECK(notes[0] == "--layer 2: flan has encoder layers 0..1; showing layer 1");
    CHECK(notes[1] == "--disable-encoder-heads 2.0: flan has encoder layers 0..1 and heads 0..2; not disabled");
    CHECK(notes[2] == "--disable-cross-heads 0.3: flan has decoder layers 0..2 and heads 0..2; not disabled");
    CHECK(start_choice_notes(choices, flan, AttentionKind::decoder, 6).size() == 2);   // layer 2 is the decoder's

    ModelInfo gpt;
    gpt.name = "gpt";
    gpt.n_layers = 2;
    gpt.n_heads = 2;
    StartChoices target;
    target.target_given = true;
    CHECK(start_choice_notes(target, gpt, AttentionKind::decoder, 4) ==
          std::vector<std::string>{"--target, --generate, --kind and --disable-*-heads: gpt is not an encoder-decoder "
                                   "model (T5 and BART take them); not used"});
}
