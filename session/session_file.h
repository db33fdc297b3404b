#pragma once
// A session: what a person chose in the window (the model, the input, the masks, the
// disabled and hidden heads, the head and row looked at, the view, the colours), as a
// small JSON file, so that reopening it shows the same picture. What is computed from
// the choices (the run, the metrics) is not saved: it is computed again.

#include "session/app_state.h"

#include <string>

namespace headscope::session {

// The file's text for `state` (version 1: {"headscope_session": 1, ...}).
std::string session_json(const AppState& state);

// `state` with the choices `text` holds put into it; `label` names the file in
// messages ("<label>: field 'layer': expected a whole number, got \"x\""). A field
// left out keeps the value `state` has.
AppState apply_session(const std::string& text, const std::string& label, AppState state);

// Written atomically; throws headscope::Error naming the path when it cannot be.
void save_session(const std::string& path, const AppState& state);
// Read and applied to `state`; throws headscope::Error naming the file and field.
AppState open_session(const std::string& path, AppState state);

}   // namespace headscope::session
