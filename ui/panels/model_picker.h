#pragma once
// The Model control: built-in models, recent folders, and a folder picker.

#include "session/app_state.h"
#include "ui/widgets/file_picker.h"

#include <optional>
#include <string>
#include <vector>

namespace headscope::ui {

class ModelPicker {
public:
    // Draws the control; returns the model the user chose to open (a name or folder).
    std::optional<std::string> draw(const session::AppState& state, const std::vector<std::string>& recent_models);

private:
    FilePicker picker_{PickKind::model_folder};
};

}   // namespace headscope::ui
