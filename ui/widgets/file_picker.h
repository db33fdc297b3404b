#pragma once
// An in-app file browser: a "Browse..." button (or open() from a menu) opening a popup
// with the current folder as a path to edit (and Home), its sub-folders and, by kind,
// its image files or the folders that hold a model (a Hugging Face checkpoint folder:
// config.json inside), a parent-folder entry, and the recent picks the caller keeps.
// Listing errors (a folder without permission, a path typed that is not there) show in
// the popup.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace headscope::ui {

enum class PickKind {
    image_file,     // picks a file whose name is an image's (is_image_file_name)
    model_folder,   // picks a folder holding config.json (is_model_folder)
};

struct PickerEntry {
    std::string name;
    bool is_folder = false;
    bool is_model = false;   // a folder holding config.json
};

// The entries of `folder` a picker of `kind` shows: sub-folders (models marked) and, for
// image_file, image files; hidden names left out; folders first, then by name. Sets
// `error` (and returns what it listed so far) when the folder cannot be read.
std::vector<PickerEntry> list_folder(const std::filesystem::path& folder, PickKind kind, std::string& error);

class FilePicker {
public:
    explicit FilePicker(PickKind kind = PickKind::image_file) : kind_(kind) {}

    // Draws the button and, while open, the popup; returns the path picked this frame.
    // `current` (the path in use) decides which folder opens first; `recent` is listed
    // in the popup's "Recent" menu.
    std::optional<std::string> draw(const char* id, const std::string& current, const std::vector<std::string>& recent);

    // Opens the popup (shown by the next draw_popup with the same id), e.g. from a menu.
    void open(const std::string& current);
    // The popup alone, while open; returns the path picked this frame.
    std::optional<std::string> draw_popup(const char* id, const std::vector<std::string>& recent);

private:
    void list(const std::filesystem::path& folder);
    // The path box and Home; a path typed and entered is listed, or picked when it names
    // what the picker picks (typed_pick_).
    void draw_location();
    std::optional<std::string> go_to_typed();

    PickKind kind_;
    bool open_requested_ = false;
    std::filesystem::path folder_;
    std::vector<PickerEntry> entries_;
    bool folder_is_model_ = false;
    std::string listing_error_;
    std::string typed_;   // the path box
    std::optional<std::string> typed_pick_;
    bool scroll_to_top_ = false;
};

// Whether a file name looks like an image this app decodes (by extension).
bool is_image_file_name(const std::string& name);
// Whether `path` is a folder holding config.json (a Hugging Face checkpoint folder).
bool is_model_folder(const std::filesystem::path& path);

}   // namespace headscope::ui
