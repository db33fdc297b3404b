#pragma once
// The recent models (checkpoint folders) and recent files (images), kept between
// sessions in one small text file:
//
//   $XDG_CONFIG_HOME/headscope/recent.txt   (XDG_CONFIG_HOME absolute), else
//   $HOME/.config/headscope/recent.txt
//
// A header line, then one "model PATH" or "file PATH" per line, newest first. The file
// is rewritten whole through a temporary file (core/base/output_file.h), so a crash never
// leaves half of it. Entries that no longer exist are dropped when it is read; a file
// that is not in this format is ignored (with a warning), never fatal.

#include <cstddef>
#include <string>
#include <vector>

namespace headscope::session {

inline constexpr std::size_t recent_limit = 10;

struct RecentLists {
    std::vector<std::string> models;   // checkpoint folders, newest first
    std::vector<std::string> files;    // image files, newest first
    bool operator==(const RecentLists& other) const = default;
};

// Where the file lives, from the two variables' values (null: unset); empty when
// neither gives an absolute folder.
std::string recent_file_path(const char* xdg_config_home, const char* home);
// The same from this process's environment.
std::string recent_file_path();
// The window's last session (session/session_file.h), saved when it closes and opened
// when it next starts: last-session.json beside the recent list; empty as above.
std::string last_session_path();

struct RecentRead {
    RecentLists lists;
    std::string warning;   // one line when the file was there but could not be used
};

// A missing file is no warning (the first session); entries whose path is gone are left
// out; each list is cut to recent_limit.
RecentRead read_recent(const std::string& path);

// Creates the folder when needed. Throws headscope::Error when it cannot write.
void write_recent(const std::string& path, const RecentLists& lists);

// Puts `entry` first (once), keeping at most `limit` entries.
void push_recent(std::vector<std::string>& list, const std::string& entry, std::size_t limit = recent_limit);

// Takes `path` (as recent_path_of keeps it) off the list: a file or model that failed to
// open is not offered again. True when it was there.
bool forget_recent(std::vector<std::string>& list, const std::string& path);

// A path as the recent lists keep it: absolute, normalised, no trailing slash.
std::string recent_path_of(const std::string& path);

}   // namespace headscope::session
