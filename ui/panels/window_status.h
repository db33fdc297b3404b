#pragma once
// What the window knows of the worker this frame, for the panels that report it.

#include "session/worker.h"

#include <optional>
#include <string>

namespace headscope::ui {

struct WindowStatus {
    std::optional<session::LoadProgress> loading;   // a model load in progress
    bool computing = false;                         // the worker has a request queued or running
    bool failed = false;                            // the newest request failed (its error is on screen)
    std::string note;                               // one line for the status bar ("loading cancelled")
};

}   // namespace headscope::ui
