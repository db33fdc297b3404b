#pragma once
// The left panel: the model, a demo model's settings, the input (sentence, token ids or
// picture), the causal mask, colours and scale, and the shown model's layers and heads.

#include "session/app_state.h"
#include "session/recent.h"
#include "session/snapshot.h"
#include "ui/panels/model_picker.h"
#include "ui/widgets/file_picker.h"

#include <optional>
#include <string>

namespace headscope::ui {

// What the window does for the panel beyond the state it edits.
struct ControlsOutcome {
    std::optional<std::string> model_to_open;   // a model chosen in the Model control
    std::optional<std::string> file_opened;     // a picture typed or picked: for the recent list
};

class ControlsPanel {
public:
    // `shown`: the snapshot on screen, null before the first. `chosen`: what the chosen
    // model is once it has loaded, before its first result too (whether it reads
    // pictures, ids only, and its own causal setting); null until then.
    ControlsOutcome draw(session::AppState& state, const session::Snapshot* shown, const ModelInfo* chosen,
                         const session::RecentLists& recent);
    // The labels box (a zero-shot model's) takes the keyboard at the next frame (Ctrl+L).
    void focus_labels() { focus_labels_ = true; }

private:
    static void draw_toy_settings(session::AppState& state);
    void draw_input(session::AppState& state, const ModelInfo* chosen, const session::RecentLists& recent,
                    ControlsOutcome& outcome);
    void draw_labels(session::AppState& state);
    static void draw_tower(session::AppState& state);
    static void draw_display_settings(session::AppState& state, const ModelInfo* chosen);
    static void draw_heads(session::AppState& state, const session::Snapshot& shown);
    static void draw_disabled_list(session::AppState& state);

    ModelPicker model_picker_;
    FilePicker file_picker_{PickKind::image_file};
    std::string image_edit_;          // the image path field while typing
    std::string image_edit_source_;   // the applied path image_edit_ was last reset from
    bool focus_labels_ = false;
};

}   // namespace headscope::ui
