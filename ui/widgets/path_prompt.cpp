#include "ui/widgets/path_prompt.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <filesystem>
#include <system_error>
#include <utility>

namespace headscope::ui {

bool PathPrompt::draw(const char* button, bool warn_existing) {
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize(button).x - 3.0f * ImGui::GetStyle().ItemSpacing.x);
    if (focus_) {
        ImGui::SetKeyboardFocusHere();
        focus_ = false;
    }
    const bool enter = ImGui::InputText("##path", &path, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    const bool pressed = ImGui::Button(button) || enter;
    if (std::error_code ec; warn_existing && !path.empty() && std::filesystem::exists(path, ec)) {
        ImGui::TextDisabled("A file of that name exists: %s replaces it.", button);
    }
    if (!message_.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, failed_ ? IM_COL32(255, 110, 110, 255) : IM_COL32(140, 220, 140, 255));
        ImGui::TextWrapped("%s", message_.c_str());
        ImGui::PopStyleColor();
    }
    return pressed;
}

void PathPrompt::report(std::string message, bool failed) {
    message_ = std::move(message);
    failed_ = failed;
}

}   // namespace headscope::ui
