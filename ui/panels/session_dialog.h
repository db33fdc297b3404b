#pragma once
// File > Save session / Open session: a window with the session file's path; Save
// writes every choice (session/session_file.h), Open puts a saved session's choices in
// place of the current ones, and the outcome shows in one line.

#include "session/app_state.h"
#include "ui/widgets/path_prompt.h"

#include <string>

namespace headscope::ui {

class SessionDialog {
public:
    void open_for_saving();
    void open_for_opening();
    // Draws it while open; Open replaces `state` with the session's choices.
    void draw(session::AppState& state);
    bool is_open() const { return open_; }

private:
    void show(bool saving);

    bool open_ = false;
    bool saving_ = true;
    PathPrompt prompt_;
};

}   // namespace headscope::ui
