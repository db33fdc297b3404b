#include "ui/panels/model_picker.h"

#include "core/models/model_registry.h"
#include "session/recent.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

namespace headscope::ui {

using namespace session;

std::optional<std::string> ModelPicker::draw(const AppState& state, const std::vector<std::string>& recent_models) {
    std::optional<std::string> chosen;
    ImGui::TextUnformatted("Model");
    bool browse = false;
    ImGui::SetNextItemWidth(px(-80.0f));
    if (ImGui::BeginCombo("##model", model_display_name(state.model.name).c_str())) {
        ImGui::TextDisabled("built-in");
        for (const BuiltinModel& m : builtin_models()) {
            if (ImGui::Selectable(m.name.c_str(), m.name == state.model.name)) chosen = m.name;
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m.description.c_str());
        }
        if (!recent_models.empty()) {
            ImGui::Separator();
            ImGui::TextDisabled("recent");
            for (const std::string& path : recent_models) {
                const std::string label = model_display_name(path) + "##" + path;   // the path keeps ids apart
                if (ImGui::Selectable(label.c_str(), recent_path_of(state.model.name) == path)) chosen = path;
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
            }
        }
        ImGui::Separator();
        if (ImGui::Selectable("Open a model folder...")) browse = true;
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered() && !is_builtin_model(state.model.name))
        ImGui::SetTooltip("%s", state.model.name.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Open...")) browse = true;
    if (ImGui::IsItemHovered()) {
        // The families from the registry's table: a new family shows up here by itself.
        std::string types;
        for (const std::string& type : hf_supported_model_types()) types += (types.empty() ? "" : ", ") + type;
        ImGui::SetTooltip("A Hugging Face checkpoint folder: config.json (model_type %s) + model.safetensors",
                          types.c_str());
    }
    if (browse) picker_.open(is_builtin_model(state.model.name) ? std::string() : recent_path_of(state.model.name));
    if (const auto picked = picker_.draw_popup("models", recent_models)) chosen = *picked;
    return chosen;
}

}   // namespace headscope::ui
