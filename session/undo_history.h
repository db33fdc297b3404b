#pragma once
// Undo and redo of the choices that change a result: the input, the causal mask, the
// custom mask and the disabled heads (not the view, the head looked at or the colours,
// which change no result). The window shows the history one state per frame; a change
// since the last becomes a step, and the changes of one gesture (typing in the text
// box, a drag over the mask) make one step together. The history starts again when
// the model changes: another model's head flags mean nothing to this one.

#include "session/app_state.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace headscope::session {

// What an undo step restores.
struct Edits {
    std::string text;
    bool text_is_ids = false;
    std::string image_path;
    std::string labels;
    bool labels_are_ids = false;
    std::string target;   // an encoder-decoder's target, typed or generated
    bool target_is_ids = false;
    int generate = 0;
    std::optional<bool> causal;
    HeadMask disabled_heads;
    HeadMask disabled_encoder_heads;
    HeadMask disabled_cross_heads;
    std::vector<std::pair<int, int>> forbidden;
    // Head flags with no head off are the same edit whatever their size: sizing the flags
    // to a model just loaded is no step.
    bool operator==(const Edits& other) const;
};
Edits edits_of(const AppState& state);
// Puts `edits` into `state`; flags with no head off switch every head back on at the
// size `state` has.
void restore(AppState& state, const Edits& edits);

class UndoHistory {
public:
    // Takes the state as this frame left it. `in_gesture`: the user is still typing in
    // the text box or dragging over the mask; `seconds`: a steady clock, for the pause
    // (1.5 s) that ends a gesture's step even while it goes on.
    void observe(const ModelChoice& model, const Edits& now, bool in_gesture, double seconds);
    // The edits to restore, or nothing when there is no step to go back (forward) to.
    std::optional<Edits> undo();
    std::optional<Edits> redo();
    bool can_undo() const { return !past_.empty(); }
    bool can_redo() const { return !future_.empty(); }

private:
    // Back (from past_ to future_) or forward: the state restored, the current one kept on the other side.
    std::optional<Edits> step(std::vector<Edits>& from, std::vector<Edits>& to);

    static constexpr std::size_t limit = 200;   // steps kept
    std::optional<ModelChoice> model_;
    std::optional<Edits> current_;
    std::vector<Edits> past_;
    std::vector<Edits> future_;
    bool gesture_step_open_ = false;   // the last step was made in a gesture still going on
    double last_change_ = 0.0;
};

}   // namespace headscope::session
