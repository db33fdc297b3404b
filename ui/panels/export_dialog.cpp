#include "ui/panels/export_dialog.h"

#include "core/base/error.h"

#include <imgui.h>

#include <filesystem>

namespace headscope::ui {

using session::MapFormat;

void ExportDialog::open(std::shared_ptr<const session::Snapshot> shown, const session::AppState& state) {
    shown_ = std::move(shown);
    layer_ = state.layer;
    head_ = state.head;
    if (folder_.empty()) {
        std::error_code ec;
        folder_ = std::filesystem::current_path(ec).string();
    }
    prompt_.path = session::default_export_path(*shown_, layer_, head_, format_, folder_);
    prompt_.clear_report();
    prompt_.focus();
    open_ = true;
}

void ExportDialog::draw(const session::AppState& state) {
    if (!open_ || !shown_) return;
    // As wide as a long path needs, as tall as its lines (the outcome line comes later).
    ImGui::SetNextWindowSizeConstraints(ImVec2(640.0f, 0.0f), ImVec2(640.0f, 10000.0f));
    if (!ImGui::Begin("Export map", &open_, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::End();
        return;
    }
    ImGui::Text("Head %d.%d of %s, %zu x %zu", layer_, head_, shown_->info.name.c_str(), shown_->input.labels.size(),
                shown_->input.labels.size());
    constexpr MapFormat formats[] = {MapFormat::csv, MapFormat::npy, MapFormat::png};
    constexpr const char* names[] = {"CSV (labels on both axes)", "NPY (float32 array)", "PNG (as render draws it)"};
    for (int i = 0; i < 3; ++i) {
        if (ImGui::RadioButton(names[i], format_ == formats[i]) && format_ != formats[i]) {
            format_ = formats[i];
            // The file name follows the format while it is still the one made up for it.
            std::filesystem::path path(prompt_.path);
            path.replace_extension(session::extension_of(format_));
            prompt_.path = path.string();
        }
        if (i < 2) ImGui::SameLine();
    }
    if (prompt_.draw("Save", true)) save(state);
    ImGui::End();
}

void ExportDialog::save(const session::AppState& state) {
    try {
        const std::size_t bytes = session::export_head_map(*shown_, layer_, head_, format_, prompt_.path,
                                                           state.colormap, state.scale == session::HeatScale::per_head);
        prompt_.report("wrote " + prompt_.path + " (" + std::to_string(bytes) + " bytes)", false);
        folder_ = std::filesystem::path(prompt_.path).parent_path().string();
    } catch (const Error& e) {
        prompt_.report(e.what(), true);
    }
}

}   // namespace headscope::ui
