#pragma once
// A run beside the main one that a view asks for while it is shown, as data: the main
// run's input and options with what the variant changes. A request lists them
// (Request::variants, from View::needs), the session computes each one
// (ModelSession::compute) and the snapshot holds it by name (Snapshot::variant): a view
// that needs another computation describes it here and reads it there, and nothing in
// between changes.

#include "core/models/model.h"
#include "session/run_input.h"

#include <optional>
#include <string>

namespace headscope::session {

struct RunVariant {
    std::string name;           // its key in the snapshot, and its line in the progress ("input B")
    bool flip_causal = false;   // the causal mask the other way
    // Another input: its text or picture, read as the main input is (make_request copies
    // the rest: ids where those are ids, the same resolution); the custom mask, which
    // belongs to the main input's positions, is dropped. Empty: the main input.
    RunInput input{};
    bool operator==(const RunVariant& other) const = default;
};

// A variant as computed: its input (when it has its own) and run, or why it failed. A
// variant's failure (a second picture that is no image) is the view's to say, not the
// main run's error.
struct VariantRun {
    std::optional<ModelInput> input;
    std::optional<ModelTrace> trace;
    std::string error;
};

}   // namespace headscope::session
