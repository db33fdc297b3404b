#pragma once
// `--toggle-bench N`: the window's own recompute timed as a user meets it. Once the first
// result is in, the selected head is switched off and on N times (as its checkbox does),
// each switch after `gap` seconds of rest, and one line per switch says what the worker's
// run took (Snapshot::compute_ms, the status bar's "compute") and how long after the
// switch its result was on screen (a long run's maps, which come before its metrics and
// output change; "settled": those in too) and the page faults it took. Right after each
// switch off, the same switch is recomputed by the model alone, in this process, as
// `headscope-cli bench --disable-heads L.H --incremental` does; the last line gives the
// medians and the window's paired ratio to the engine (docs/performance.md).
// `--type-bench N` (type_tokens): the same for N edits at the end of the input, one at a
// time (token ids: its first id typed again; text: its first character), each paired with
// the engine's recompute from the run shown before it, reusing the positions the window's
// run reused, as `headscope-cli bench --appended` does.

#include "app/gui/frame_hooks.h"
#include "ui/app_window.h"

#include <chrono>
#include <memory>

namespace headscope::gui {

std::unique_ptr<FrameHook> make_toggle_bench(ui::AppWindow& app, int toggles, double gap_seconds,
                                             bool type_tokens = false);

}   // namespace headscope::gui
