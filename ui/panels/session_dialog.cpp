#include "ui/panels/session_dialog.h"

#include "core/base/error.h"
#include "session/session_file.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <filesystem>
#include <system_error>

namespace headscope::ui {

void SessionDialog::open_for_saving() { show(true); }
void SessionDialog::open_for_opening() { show(false); }

void SessionDialog::show(bool saving) {
    saving_ = saving;
    if (prompt_.path.empty()) {
        std::error_code ec;
        prompt_.path = (std::filesystem::current_path(ec) / "headscope-session.json").string();
    }
    prompt_.clear_report();
    prompt_.focus();
    open_ = true;
}

void SessionDialog::draw(session::AppState& state) {
    if (!open_) return;
    ImGui::SetNextWindowSizeConstraints(ImVec2(px(640.0f), 0.0f), ImVec2(px(640.0f), 10000.0f));
    const char* title = saving_ ? "Save session###session" : "Open session###session";
    if (!ImGui::Begin(title, &open_, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::End();
        return;
    }
    ImGui::TextUnformatted(saving_ ? "The model, input, masks, disabled heads, head, view and colours, as JSON:"
                                   : "A session saved before: its choices replace the current ones (Ctrl+Z undoes "
                                     "the input and masks).");
    if (prompt_.draw(saving_ ? "Save" : "Open", saving_)) {
        try {
            if (saving_) {
                session::save_session(prompt_.path, state);
                prompt_.report("saved " + prompt_.path, false);
            } else {
                state = session::open_session(prompt_.path, state);
                prompt_.report("opened " + prompt_.path, false);
            }
        } catch (const Error& e) {
            prompt_.report(e.what(), true);
        }
    }
    ImGui::End();
}

}   // namespace headscope::ui
