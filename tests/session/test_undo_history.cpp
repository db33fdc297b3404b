// Undo and redo (session/undo_history.h): a step per change, one per gesture, none for
// flags sized to a model, and a history that starts again with another model.

#include "session/undo_history.h"

#include <doctest/doctest.h>

using namespace headscope;
using namespace headscope::session;

namespace {

Edits with_text(std::string text) {
    Edits edits;
    edits.text = std::move(text);
    return edits;
}

ModelChoice model_named(std::string name) {
    ModelChoice model;
    model.name = std::move(name);
    return model;
}

}   // namespace

TEST_CASE("undo: each change a step, undone and redone in order, a new change drops the redo") {
    UndoHistory history;
    const ModelChoice gpt2 = model_named("/models/gpt2");
    Edits a = with_text("the cat");
    history.observe(gpt2, a, false, 0.0);
    CHECK_FALSE(history.can_undo());
    Edits b = a;
    b.disabled_heads = HeadMask(2, 2);
    b.disabled_heads.set(1, 0);
    history.observe(gpt2, b, false, 1.0);
    Edits c = b;
    c.causal = false;
    history.observe(gpt2, c, false, 2.0);
    history.observe(gpt2, c, false, 3.0);   // nothing changed: no step
    REQUIRE(history.can_undo());
    CHECK(history.undo() == b);
    CHECK(history.undo() == a);
    CHECK_FALSE(history.undo());
    CHECK(history.redo() == b);
    // The window shows the restored state next frame: no step for it.
    history.observe(gpt2, b, false, 4.0);
    CHECK(history.can_redo());
    Edits d = b;
    d.forbidden = {{2, 1}};
    history.observe(gpt2, d, false, 5.0);   // a new change: the undone future is gone
    CHECK_FALSE(history.can_redo());
    CHECK(history.undo() == b);
}

TEST_CASE("undo: one step per gesture, ended by letting go or by a pause") {
    UndoHistory history;
    const ModelChoice gpt2 = model_named("/models/gpt2");
    history.observe(gpt2, with_text(""), false, 0.0);
    history.observe(gpt2, with_text("t"), true, 1.0);   // typing
    history.observe(gpt2, with_text("th"), true, 1.2);
    history.observe(gpt2, with_text("the"), true, 1.4);
    history.observe(gpt2, with_text("the"), false, 1.6);          // the box let go
    history.observe(gpt2, with_text("the cat"), true, 2.0);       // a second gesture
    history.observe(gpt2, with_text("the cat sat"), true, 4.0);   // after a pause: a step of its own
    CHECK(history.undo() == with_text("the cat"));
    CHECK(history.undo() == with_text("the"));
    CHECK(history.undo() == with_text(""));
    CHECK_FALSE(history.can_undo());
}

TEST_CASE("undo: flags sized to a model are no step, another model starts the history again") {
    UndoHistory history;
    Edits unsized = with_text("a b c");
    history.observe(model_named("/models/gpt2"), unsized, false, 0.0);
    Edits sized = unsized;
    sized.disabled_heads = HeadMask(12, 12);   // every head on, sized once the first result came
    history.observe(model_named("/models/gpt2"), sized, false, 1.0);
    CHECK_FALSE(history.can_undo());
    sized.disabled_heads.set(3, 4);
    history.observe(model_named("/models/gpt2"), sized, false, 2.0);
    CHECK(history.can_undo());
    history.observe(model_named("/models/llama"), unsized, false, 3.0);
    CHECK_FALSE(history.can_undo());
    CHECK_FALSE(history.can_redo());
}

TEST_CASE("undo: restoring puts the edits back, flags with no head off as every head on at the state's size") {
    AppState state;
    state.disabled_heads = HeadMask(2, 3);
    state.disabled_heads.set(0, 1);
    state.text = "now";
    Edits earlier = with_text("before");
    earlier.forbidden = {{1, 0}};
    earlier.causal = true;
    restore(state, earlier);
    CHECK(state.text == "before");
    CHECK(state.forbidden == earlier.forbidden);
    CHECK(state.causal == std::optional<bool>(true));
    CHECK(state.disabled_heads.layers() == 2);
    CHECK(state.disabled_heads.heads() == 3);
    CHECK_FALSE(state.disabled_heads.any());
    CHECK(edits_of(state) == earlier);
}
