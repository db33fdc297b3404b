#pragma once
// What a view draws from and acts on during one frame: the shown snapshot, the user's
// choices, the texture pool (maps coloured under the current colour map and scale), and
// the background job queues. The window (ui/app_window.h) makes one per frame.

#include "core/analysis/ablation_effects.h"
#include "session/app_state.h"
#include "session/background_job.h"
#include "session/model_session.h"
#include "session/snapshot.h"
#include "ui/widgets/heatmap_texture.h"
#include "ui/widgets/texture_pool.h"

#include <imgui.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace headscope::ui {

// What head (layer, head) of a result does: the role a demo model was built to, else the
// role its metrics on this input show (core/analysis/head_roles.h: trained models).
struct HeadCaption {
    std::string name;   // a word or two for the grid ("previous token"); empty: nothing to name
    std::string text;   // a line for the matrix view and tooltips
};
HeadCaption head_caption(const session::Snapshot& shown, int layer, int head);

// How a head's title starts for the kind shown: an encoder-decoder's encoder and cross
// heads are named so; a decoder's own heads (every other model's) are plain heads.
const char* kind_heading(session::AttentionKind kind);   // "Head", "Encoder head", "Cross-attention head"

// Where a picture went on screen.
struct PictureRect {
    ImVec2 origin;
    float width = 0.0f;
    float height = 0.0f;
};

// The window's side of what the views do, beyond the state: opening a file remembers
// it in the recent list; a view sends the user to another with some of its settings
// given (View::restore) (ui/app_window.cpp).
struct WindowActions {
    std::function<void(const std::string& path)> remember_file;
    std::function<void(const std::string& view, const std::string& settings)> show_view;
};

class ViewContext {
public:
    ViewContext(std::shared_ptr<const session::Snapshot> shown, session::AppState& state, TexturePool& textures,
                session::BackgroundJobs& scan_jobs, session::BackgroundJobs& view_jobs, WindowActions actions);

    const session::Snapshot& shown() const { return *shown_; }
    // The snapshot itself, for work that must keep it alive off the UI thread.
    const std::shared_ptr<const session::Snapshot>& shown_ptr() const { return shown_; }
    session::AppState& state() { return state_; }
    // What the views' caches of the shown result are keyed by: its generation, and the
    // kind of attention shown (an encoder-decoder's kinds are other maps of one result).
    std::string result_key() const;
    TexturePool& textures() { return textures_; }
    // Jobs the user starts (the importance scan) and jobs the views start while shown
    // (rollout, similarity, head pairs) run apart: opening a tab never stops a scan.
    session::BackgroundJobs& scan_jobs() { return scan_jobs_; }
    session::BackgroundJobs& view_jobs() { return view_jobs_; }
    void remember_file(const std::string& path) const;
    // Opens the tab of --view name `view` with `settings` (a JSON object's text, the
    // fields it names) over its own.
    void show_view(const std::string& view, const std::string& settings) const;

    // The shown run's mask ([T, T] allowed pairs), or null when every pair is allowed.
    const Mask* mask() const;
    // The texture of weights (any [R, C] map of the shown snapshot: a big one is coloured
    // on another thread that holds the snapshot) under the current colour map and scale.
    const HeatmapTexture& weights_texture(const std::string& key, const Matrix& weights);
    // Signed values on a diverging map, 0 in the middle; `allowed` greys masked cells.
    // `least_bound`: the smallest |value| drawn at either end, so that values all below it
    // (rounding) stay near the middle instead of spreading over the whole map.
    const HeatmapTexture& signed_texture(const std::string& key, const Matrix& values, const Mask* allowed,
                                         float least_bound = 1e-12f);
    // The shown picture with `heat` (one cell per patch of a grid_w x grid_h grid) over
    // it, at the cursor, as large as fits `room` keeping the grid's aspect.
    PictureRect draw_picture_with_heat(const HeatmapTexture& heat, int grid_w, int grid_h, ImVec2 room);
    HeadCaption head_caption(int layer, int head) const { return ui::head_caption(*shown_, layer, head); }
    // A long run in progress of the shown model, whose streamed maps' thumbnails land layer
    // by layer (session::ComputeProgress::landed_thumbnails); null otherwise.
    const session::ComputeProgress* landing() const;
    // Each head's metrics as the views show them: the shown run's, with the layers a long
    // run has landed so far over them (landing()).
    const std::vector<HeadMetrics>& head_metrics();
    void set_computing(const std::optional<session::ComputeProgress>* computing) { computing_ = computing; }

    // The head-importance scan of what is shown (model, input, mask), once it ran.
    std::shared_ptr<const ImportanceScan> importance() const;
    std::string importance_key() const;
    session::BackgroundJobs::Work importance_work() const;
    void start_importance_scan();

private:
    std::shared_ptr<const session::Snapshot> shown_;
    session::AppState& state_;
    TexturePool& textures_;
    session::BackgroundJobs& scan_jobs_;
    session::BackgroundJobs& view_jobs_;
    WindowActions actions_;
    const std::optional<session::ComputeProgress>* computing_ = nullptr;
    std::optional<std::vector<HeadMetrics>> merged_metrics_;   // head_metrics() while a run lands
};

// While a long run lands (ViewContext::landing), a line saying which layers are the new
// run's and which still show the last result; nothing otherwise.
void draw_landing_line(ViewContext& context);

}   // namespace headscope::ui
