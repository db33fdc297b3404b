#include "session/undo_history.h"

namespace headscope::session {

namespace {

bool same_heads(const HeadMask& a, const HeadMask& b) { return (!a.any() && !b.any()) || a == b; }

}   // namespace

bool Edits::operator==(const Edits& other) const {
    return text == other.text && text_is_ids == other.text_is_ids && image_path == other.image_path &&
           labels == other.labels && labels_are_ids == other.labels_are_ids && target == other.target &&
           target_is_ids == other.target_is_ids && generate == other.generate && causal == other.causal &&
           same_heads(disabled_heads, other.disabled_heads) &&
           same_heads(disabled_encoder_heads, other.disabled_encoder_heads) &&
           same_heads(disabled_cross_heads, other.disabled_cross_heads) && forbidden == other.forbidden;
}

Edits edits_of(const AppState& state) {
    return {.text = state.text,
            .text_is_ids = state.text_is_ids,
            .image_path = state.image_path,
            .labels = state.labels,
            .labels_are_ids = state.labels_are_ids,
            .target = state.target,
            .target_is_ids = state.target_is_ids,
            .generate = state.generate,
            .causal = state.causal,
            .disabled_heads = state.disabled_heads,
            .disabled_encoder_heads = state.disabled_encoder_heads,
            .disabled_cross_heads = state.disabled_cross_heads,
            .forbidden = state.forbidden};
}

namespace {

// Flags with no head off switch every head back on at the size `flags` has.
void restore_heads(HeadMask& flags, const HeadMask& edited) {
    if (edited.any()) {
        flags = edited;
    } else {
        flags.enable_all();
    }
}

}   // namespace

void restore(AppState& state, const Edits& edits) {
    state.text = edits.text;
    state.text_is_ids = edits.text_is_ids;
    if (state.image_path != edits.image_path) {
        state.image_path = edits.image_path;
        state.image_is_demo = false;
    }
    state.labels = edits.labels;
    state.labels_are_ids = edits.labels_are_ids;
    state.target = edits.target;
    state.target_is_ids = edits.target_is_ids;
    state.generate = edits.generate;
    state.causal = edits.causal;
    restore_heads(state.disabled_heads, edits.disabled_heads);
    restore_heads(state.disabled_encoder_heads, edits.disabled_encoder_heads);
    restore_heads(state.disabled_cross_heads, edits.disabled_cross_heads);
    state.forbidden = edits.forbidden;
}

void UndoHistory::observe(const ModelChoice& model, const Edits& now, bool in_gesture, double seconds) {
    if (!model_ || !(*model_ == model) || !current_) {
        *this = UndoHistory{};
        model_ = model;
        current_ = now;
        return;
    }
    if (!in_gesture) gesture_step_open_ = false;
    if (now == *current_) return;
    const bool same_step = gesture_step_open_ && in_gesture && seconds - last_change_ < 1.5;
    if (!same_step) {
        past_.push_back(*current_);
        if (past_.size() > limit) past_.erase(past_.begin());
    }
    future_.clear();
    current_ = now;
    gesture_step_open_ = in_gesture;
    last_change_ = seconds;
}

std::optional<Edits> UndoHistory::undo() { return step(past_, future_); }

std::optional<Edits> UndoHistory::redo() { return step(future_, past_); }

std::optional<Edits> UndoHistory::step(std::vector<Edits>& from, std::vector<Edits>& to) {
    if (from.empty() || !current_) return std::nullopt;
    to.push_back(*current_);
    current_ = from.back();
    from.pop_back();
    gesture_step_open_ = false;
    return current_;
}

}   // namespace headscope::session
