#pragma once
// An in-app file browser for images: a "Browse..." button opening a popup with the
// current folder's sub-folders and image files, a parent-folder entry, and the files
// opened recently. Listing errors (a folder without permission) show in the popup.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace headscope::ui {

class FilePicker {
public:
    // Draws the button (and, while open, the popup); returns the file picked this frame.
    // `current` (the path in use) decides which folder opens first.
    std::optional<std::string> draw(const char* id, const std::string& current);

    // Puts `path` first in the recent list (at most 8, no duplicates).
    void remember(const std::string& path);
    const std::vector<std::string>& recent() const { return recent_; }

private:
    struct Entry {
        std::string name;
        bool is_folder = false;
    };
    void list(const std::filesystem::path& folder);

    std::filesystem::path folder_;
    std::vector<Entry> entries_;
    std::string listing_error_;
    std::vector<std::string> recent_;
};

// Whether a file name looks like an image this app decodes (by extension).
bool is_image_file_name(const std::string& name);

} // namespace headscope::ui
