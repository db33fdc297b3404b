#pragma once
// What the window knows of the worker this frame, for the panels that report it.

#include "core/base/memory_room.h"
#include "session/worker.h"

#include <optional>
#include <string>

namespace headscope::ui {

struct WindowStatus {
    std::optional<session::LoadProgress> loading;       // a model load in progress
    bool computing = false;                             // the worker has a request queued or running
    std::optional<session::ComputeProgress> progress;   // the computation running, layer k of L
    bool failed = false;                                // the newest request failed (its error is on screen)
    std::string note;                                   // one line for the status bar ("loading cancelled")
    // This process's resident memory and the machine's RAM (bytes), read a few times a second.
    MachineMemory memory;
    // The last frame's drawing, from its start to its swap, in ms: not the rest between frames
    // (the window sleeps when nothing moves), which a frame rate would count.
    double frame_ms = 0.0;
};

}   // namespace headscope::ui
