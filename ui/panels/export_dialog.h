#pragma once
// File > Export: a window to write, from the shown result, the selected head's map (all
// of it or the part in sight; CSV, NPY, PNG at a chosen scale or SVG), every head of
// the run as one safetensors file (what headscope-cli dump writes), or the Heads table
// as CSV, to a path the user may edit (its extension picks the map's format). The file
// is written off the window's thread, with progress and Cancel; then one line says what
// was written or why it could not be.

#include "core/analysis/ablation_effects.h"
#include "session/app_state.h"
#include "session/background_job.h"
#include "session/export_map.h"
#include "session/snapshot.h"
#include "ui/widgets/path_prompt.h"

#include <memory>
#include <optional>
#include <string>

namespace headscope::ui {

// What File > Export writes.
enum class ExportWhat { head_map, every_head, heads_table };

class ExportDialog {
public:
    // Opens it on head (state.layer, state.head) of `shown`, a file named after it in the
    // folder of the last export (the working folder the first time); `in_sight`: the part
    // of the map the view shows, `scan`: the importance scan of this result, if any.
    // `whole`: the whole run behind `shown` (an encoder-decoder's `shown` is one kind's
    // maps: session/attention_kind.h), what "Every head" writes.
    void open(std::shared_ptr<const session::Snapshot> shown, std::shared_ptr<const session::Snapshot> whole,
              const session::AppState& state, std::optional<session::MapRegion> in_sight,
              std::shared_ptr<const ImportanceScan> scan);
    // Draws it while open.
    void draw(const session::AppState& state);
    bool is_open() const { return open_; }

private:
    void draw_choices();
    void save(const session::AppState& state);
    void show_outcome();
    std::string default_path() const;

    bool open_ = false;
    std::shared_ptr<const session::Snapshot> shown_;   // the result as it was when opened
    std::shared_ptr<const session::Snapshot> whole_;   // its whole run (open())
    std::shared_ptr<const ImportanceScan> scan_;
    std::optional<session::MapRegion> in_sight_;
    int layer_ = 0;
    int head_ = 0;
    ExportWhat what_ = ExportWhat::head_map;
    session::MapFormat format_ = session::MapFormat::csv;
    bool only_in_sight_ = true;
    int png_scale_ = 1;
    PathPrompt prompt_;
    std::string folder_;   // where the last export went
    session::BackgroundJobs jobs_;
    std::string job_key_;   // the last save's; its outcome is reported once
    int saves_ = 0;
};

}   // namespace headscope::ui
