#include "ui/file_picker.h"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

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

void FilePicker::remember(const std::string& path) {
    recent_.erase(std::remove(recent_.begin(), recent_.end(), path), recent_.end());
    recent_.insert(recent_.begin(), path);
    if (recent_.size() > 8) recent_.resize(8);
}

void FilePicker::list(const std::filesystem::path& folder) {
    namespace fs = std::filesystem;
    folder_ = folder;
    entries_.clear();
    listing_error_.clear();
    std::error_code ec;
    fs::directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
        listing_error_ = folder.string() + ": " + ec.message();
        return;
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) {
            listing_error_ = folder.string() + ": " + ec.message();
            break;
        }
        const std::string name = it->path().filename().string();
        if (name.empty() || name[0] == '.') continue;   // hidden files stay hidden
        std::error_code type_error;
        const bool folder_entry = it->is_directory(type_error);
        if (folder_entry || is_image_file_name(name)) entries_.push_back({name, folder_entry});
    }
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
        return a.is_folder != b.is_folder ? a.is_folder : a.name < b.name;   // folders first
    });
}

std::optional<std::string> FilePicker::draw(const char* id, const std::string& current) {
    namespace fs = std::filesystem;
    std::optional<std::string> picked;
    ImGui::PushID(id);
    if (ImGui::Button("Browse...")) {
        std::error_code ec;
        fs::path start = fs::path(current).parent_path();
        if (start.empty() || !fs::is_directory(start, ec)) start = fs::current_path(ec);
        list(start);
        ImGui::OpenPopup("files");
    }
    ImGui::SetNextWindowSize(ImVec2(460.0f, 420.0f), ImGuiCond_Appearing);
    if (ImGui::BeginPopup("files")) {
        ImGui::TextWrapped("%s", folder_.string().c_str());
        if (!recent_.empty() && ImGui::BeginMenu("Recent files")) {
            for (const std::string& path : recent_) {
                if (ImGui::MenuItem(path.c_str())) picked = path;
            }
            ImGui::EndMenu();
        }
        ImGui::Separator();
        ImGui::BeginChild("entries", ImVec2(0.0f, -ImGui::GetFrameHeightWithSpacing()));
        if (folder_.has_parent_path() && folder_ != folder_.root_path() && ImGui::Selectable("..  (parent folder)")) {
            list(folder_.parent_path());
        }
        if (!listing_error_.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "%s", listing_error_.c_str());
        for (const Entry& e : std::vector<Entry>(entries_)) {   // a copy: list() may replace entries_
            const std::string label = e.is_folder ? e.name + "/" : e.name;
            if (ImGui::Selectable(label.c_str())) {
                if (e.is_folder) {
                    list(folder_ / e.name);
                } else {
                    picked = (folder_ / e.name).string();
                }
            }
        }
        ImGui::EndChild();
        if (ImGui::Button("Cancel") || picked) ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    ImGui::PopID();
    if (picked) remember(*picked);
    return picked;
}

} // namespace headscope::ui
