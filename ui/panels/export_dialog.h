#pragma once
// File > Export map: a window to write the selected head's map of the shown result as
// CSV, NPY or PNG (session/export_map.h) to a path the user may edit, then what was
// written or why it could not be, in one line.

#include "session/app_state.h"
#include "session/export_map.h"
#include "session/snapshot.h"
#include "ui/widgets/path_prompt.h"

#include <memory>
#include <string>

namespace headscope::ui {

class ExportDialog {
public:
    // Opens it on head (state.layer, state.head) of `shown`, a file named after them in
    // the folder of the last export (the working folder the first time).
    void open(std::shared_ptr<const session::Snapshot> shown, const session::AppState& state);
    // Draws it while open.
    void draw(const session::AppState& state);
    bool is_open() const { return open_; }

private:
    void save(const session::AppState& state);

    bool open_ = false;
    std::shared_ptr<const session::Snapshot> shown_;   // the result as it was when opened
    int layer_ = 0;
    int head_ = 0;
    session::MapFormat format_ = session::MapFormat::csv;
    PathPrompt prompt_;
    std::string folder_;   // where the last export went
};

}   // namespace headscope::ui
