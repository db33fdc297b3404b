#include "session/recent.h"

#include "core/base/error.h"
#include "core/base/output_file.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>

namespace headscope::session {

namespace {

constexpr std::string_view header = "# headscope recent models and files, newest first (safe to delete)";
constexpr std::uintmax_t largest_file = 256 * 1024;   // 2 x 10 paths need far less

bool still_there(const std::string& path, bool folder) {
    std::error_code ec;
    return folder ? std::filesystem::is_directory(path, ec) : std::filesystem::is_regular_file(path, ec);
}

}   // namespace

std::string recent_file_path(const char* xdg_config_home, const char* home) {
    const auto absolute = [](const char* value) { return value != nullptr && value[0] == '/'; };
    std::string folder;
    if (absolute(xdg_config_home)) {
        folder = xdg_config_home;
    } else if (absolute(home)) {
        folder = home;
        folder.append("/.config");
    } else {
        return {};
    }
    folder.append("/headscope/recent.txt");
    return folder;
}

std::string recent_file_path() { return recent_file_path(std::getenv("XDG_CONFIG_HOME"), std::getenv("HOME")); }

std::string last_session_path() {
    const std::string recent = recent_file_path();
    return recent.empty() ? recent : (std::filesystem::path(recent).parent_path() / "last-session.json").string();
}

RecentRead read_recent(const std::string& path) {
    namespace fs = std::filesystem;
    RecentRead read;
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec)) return read;
    const auto ignored = [&](const std::string& why) {
        read.lists = {};
        read.warning = path + ": ignored (" + why + "); it is rewritten when a model or file is opened";
        return read;
    };
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) return ignored("cannot read it: " + ec.message());
    if (size > largest_file) return ignored("larger than 256 KiB, not a list of recent files");
    std::ifstream in(path, std::ios::binary);
    if (!in) return ignored("cannot open it");
    std::string line;
    if (!std::getline(in, line) || line != header) return ignored("not headscope's recent-files format");
    int number = 1;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty()) continue;
        if (line.find('\0') != std::string::npos || line.find('\r') != std::string::npos) {
            return ignored("line " + std::to_string(number) + " holds binary data");
        }
        const auto space = line.find(' ');
        const std::string kind = line.substr(0, space);
        const std::string entry = space == std::string::npos ? std::string() : line.substr(space + 1);
        if ((kind != "model" && kind != "file") || entry.empty()) {
            return ignored("line " + std::to_string(number) + " is not 'model PATH' or 'file PATH'");
        }
        std::vector<std::string>& list = kind == "model" ? read.lists.models : read.lists.files;
        const bool duplicate = std::find(list.begin(), list.end(), entry) != list.end();
        if (!duplicate && list.size() < recent_limit && still_there(entry, kind == "model")) list.push_back(entry);
    }
    return read;
}

void write_recent(const std::string& path, const RecentLists& lists) {
    namespace fs = std::filesystem;
    if (path.empty()) throw Error("no folder for the recent-files list (neither XDG_CONFIG_HOME nor HOME is set)");
    std::error_code ec;
    const fs::path folder = fs::path(path).parent_path();
    fs::create_directories(folder, ec);
    if (ec) throw Error(folder.string() + ": cannot create the folder: " + ec.message());
    std::string text(header);
    text.push_back('\n');
    const auto add = [&](std::string_view kind, const std::vector<std::string>& list) {
        std::size_t n = 0;
        for (const std::string& entry : list) {
            // A path with a line break cannot be one line: it is not kept.
            if (entry.empty() || entry.find_first_of("\n\r") != std::string::npos || ++n > recent_limit) continue;
            text.append(kind).append(" ").append(entry).push_back('\n');
        }
    };
    add("model", lists.models);
    add("file", lists.files);
    write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

void push_recent(std::vector<std::string>& list, const std::string& entry, std::size_t limit) {
    list.erase(std::remove(list.begin(), list.end(), entry), list.end());
    list.insert(list.begin(), entry);
    if (list.size() > limit) list.resize(limit);
}

bool forget_recent(std::vector<std::string>& list, const std::string& path) {
    const std::string entry = recent_path_of(path);
    const auto end = std::remove(list.begin(), list.end(), entry);
    const bool found = end != list.end();
    list.erase(end, list.end());
    return found;
}

std::string recent_path_of(const std::string& path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(path, ec);
    if (ec) return path;
    p = p.lexically_normal();
    std::string text = p.string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
}

}   // namespace headscope::session
