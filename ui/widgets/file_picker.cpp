#include "ui/widgets/file_picker.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace headscope::ui {

bool is_image_file_name(const std::string& name) {
    const auto dot = name.find_last_of('.');
    if (dot == std::string::npos) return false;
    std::string extension = name.substr(dot + 1);
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    constexpr std::array<std::string_view, 6> images = {"png", "jpg", "jpeg", "bmp", "gif", "tga"};
    return std::find(images.begin(), images.end(), extension) != images.end();
}

bool is_model_folder(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_directory(path, ec) && std::filesystem::is_regular_file(path / "config.json", ec);
}

std::vector<PickerEntry> list_folder(const std::filesystem::path& folder, PickKind kind, std::string& error) {
    namespace fs = std::filesystem;
    std::vector<PickerEntry> entries;
    error.clear();
    std::error_code ec;
    fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
        error = folder.string() + ": " + ec.message();
        return entries;
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) {
            error = folder.string() + ": " + ec.message();
            break;
        }
        const std::string name = it->path().filename().string();
        if (name.empty() || name[0] == '.') continue;   // hidden files stay hidden
        std::error_code type_error;
        const bool is_folder = it->is_directory(type_error);
        if (is_folder) {
            entries.push_back({name, true, kind == PickKind::model_folder && is_model_folder(it->path())});
        } else if (kind == PickKind::image_file && is_image_file_name(name)) {
            entries.push_back({name, false, false});
        }
    }
    std::sort(entries.begin(), entries.end(), [](const PickerEntry& a, const PickerEntry& b) {
        return a.is_folder != b.is_folder ? a.is_folder : a.name < b.name;   // folders first
    });
    return entries;
}

void FilePicker::list(const std::filesystem::path& folder) {
    folder_ = folder;
    typed_ = folder.string();
    entries_ = list_folder(folder, kind_, listing_error_);
    folder_is_model_ = kind_ == PickKind::model_folder && is_model_folder(folder);
    scroll_to_top_ = true;   // a new folder's list starts at its top, not the last one's place
}

std::optional<std::string> FilePicker::go_to_typed() {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path typed(typed_);
    if (typed_.starts_with("~")) {
        if (const char* home = std::getenv("HOME")) typed = fs::path(home) / typed_.substr(typed_.size() > 1 ? 2 : 1);
    }
    const bool wanted = kind_ == PickKind::model_folder
                            ? is_model_folder(typed)
                            : fs::is_regular_file(typed, ec) && is_image_file_name(typed.string());
    if (wanted) return typed.string();
    if (fs::is_directory(typed, ec)) {
        list(typed);
    } else {
        listing_error_ =
            typed_ + ": " +
            (fs::exists(typed, ec) ? (kind_ == PickKind::model_folder ? "not a model folder (no config.json)"
                                                                      : "not an image file this app reads")
                                   : "no such file or folder");
    }
    return std::nullopt;
}

void FilePicker::draw_location() {
    // The folder as a path to edit (Enter goes there, or picks what it names), and Home.
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Home").x - 3.0f * ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::InputText("##location", &typed_,
                         ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll))
        typed_pick_ = go_to_typed();
    ImGui::SameLine();
    if (const char* home = std::getenv("HOME"); ImGui::Button("Home") && home != nullptr) list(home);
}

void FilePicker::open(const std::string& current) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // An image opens in its folder; a model folder opens in its parent, next to its siblings.
    fs::path start = fs::path(current);
    while (!start.empty() && start.filename().empty()) start = start.parent_path();   // "a/b/" -> "a/b"
    start = start.parent_path();
    if (start.empty() || !fs::is_directory(start, ec)) start = fs::current_path(ec);
    list(start);
    open_requested_ = true;
}

std::optional<std::string> FilePicker::draw(const char* id, const std::string& current,
                                            const std::vector<std::string>& recent) {
    ImGui::PushID(id);
    if (ImGui::Button("Browse...")) open(current);
    ImGui::PopID();
    return draw_popup(id, recent);
}

std::optional<std::string> FilePicker::draw_popup(const char* id, const std::vector<std::string>& recent) {
    const bool models = kind_ == PickKind::model_folder;
    std::optional<std::string> picked;
    ImGui::PushID(id);
    if (open_requested_) {
        ImGui::OpenPopup("files");
        open_requested_ = false;
    }
    ImGui::SetNextWindowSize(px(480.0f, 440.0f), ImGuiCond_Appearing);
    if (ImGui::BeginPopup("files")) {
        draw_location();
        if (typed_pick_) picked = std::exchange(typed_pick_, std::nullopt);
        if (models) {
            ImGui::TextDisabled("A model folder holds config.json and model.safetensors (Hugging Face layout).");
        }
        if (!recent.empty() && ImGui::BeginMenu(models ? "Recent models" : "Recent files")) {
            for (const std::string& path : recent) {
                if (ImGui::MenuItem(path.c_str())) picked = path;
            }
            ImGui::EndMenu();
        }
        ImGui::Separator();
        const float footer = ImGui::GetFrameHeightWithSpacing();
        ImGui::BeginChild("entries", ImVec2(0.0f, -footer));
        if (scroll_to_top_) {
            ImGui::SetScrollY(0.0f);
            scroll_to_top_ = false;
        }
        bool moved = false;   // another folder listed: its entries are drawn from the next frame
        if (folder_.has_parent_path() && folder_ != folder_.root_path() && ImGui::Selectable("..  (parent folder)")) {
            list(folder_.parent_path());
            moved = true;
        }
        if (!listing_error_.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", listing_error_.c_str());
        for (const PickerEntry& e : std::vector<PickerEntry>(moved ? std::vector<PickerEntry>() : entries_)) {
            // (a copy: list() may replace entries_; once it has, the old ones are not drawn)
            // Model folders are picked with one click; other folders are entered.
            std::string label = e.name;
            if (e.is_folder) label.push_back('/');
            if (e.is_model) label.append("   (model: config.json)");
            if (e.is_model) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(120, 220, 140, 255));
            const bool clicked = ImGui::Selectable(label.c_str());
            if (e.is_model) ImGui::PopStyleColor();
            if (!clicked) continue;
            if (e.is_model || !e.is_folder) {
                picked = (folder_ / e.name).string();
            } else {
                list(folder_ / e.name);
                break;   // the rest of the old folder's entries would sit where the new ones go
            }
        }
        if (models && entries_.empty() && listing_error_.empty()) ImGui::TextDisabled("(no sub-folders)");
        ImGui::EndChild();
        if (models && folder_is_model_) {
            if (ImGui::Button("Open this folder")) picked = folder_.string();
            ImGui::SameLine();
        }
        if (ImGui::Button("Cancel") || picked) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    ImGui::PopID();
    return picked;
}

}   // namespace headscope::ui
