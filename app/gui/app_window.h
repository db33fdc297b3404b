#pragma once
// The window's content: the user's choices (AppState), the worker computing them, the
// snapshot on screen, and the ImGui code that draws the controls and the six views.

#include "app/gui/app_state.h"
#include "app/gui/background_job.h"
#include "app/gui/predictions.h"
#include "app/gui/recent.h"
#include "app/gui/worker.h"
#include "ui/file_picker.h"
#include "ui/heatmap_texture.h"
#include "ui/texture_pool.h"

#include <imgui.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::gui {

class AppWindow {
public:
    // `recent_path`: the recent models / files list (recent.h); empty keeps none.
    AppWindow(AppState initial, std::string recent_path);

    // Once per frame: submits what changed, swaps in a finished result.
    void update();
    // `previous_frame`: the previous frame from its start (after any sleep) to its swap;
    // what it left of a 20 ms frame goes to rebuilding textures (texture_pool.h).
    void draw(std::chrono::steady_clock::duration previous_frame);

    // A file dropped on the window: an image, or a model folder (config.json inside).
    void on_drop(const std::string& path);

    // Starts the head-importance scan as soon as the first result is in (--scan-importance).
    void scan_importance_when_ready() { scan_on_first_result_ = true; }
    // Selects the most nameable head (app_state.h: showcase_head) once the first result
    // is in: a first launch opens on a learned head doing something, not on head 0.0.
    void select_showcase_head_when_ready() { showcase_on_first_result_ = true; }
    // Checks the command line's choices against the model once its first result is in,
    // and says (above the views, and on stderr) which of them did not fit.
    void check_start_choices_when_ready(StartChoices choices) { start_choices_ = std::move(choices); }

    // Switches a head off, or on again, as its switch in the controls does
    // (--bench-recompute); a head the model lacks is ignored.
    void toggle_head(int layer, int head) { toggle_disabled(state_, layer, head); }

    // `wake` is called from another thread when a result arrives while the loop sleeps.
    void set_wake(std::function<void()> wake) { worker_.set_on_answer(std::move(wake)); }
    // True when the next frame would draw what the last one did, unless input or a result
    // arrives: no texture is still being rebuilt and nothing waits to be shown.
    bool still() const;
    // True while the model or an analysis computes (their progress is on screen).
    bool working() const;

    // True once the newest request has been answered and its result (or error) is shown,
    // and no analysis for it is still running.
    bool settled() const;
    // An error on screen: a model that failed to load, else the newest request's.
    const std::string& error() const { return model_error_.empty() ? error_ : model_error_; }

private:
    // The scripted user of --soak (soak.cpp) calls the same entry points as the controls.
    friend class SoakControls;

    void draw_controls();
    void draw_model_control();
    void draw_loading();
    void draw_predictions();
    void draw_status_bar();
    void draw_matrix_view();
    void draw_tokens_view();
    void draw_image_view();
    void draw_model_view();
    void draw_compare_view();
    void draw_stages_view();
    void draw_heads_view();
    void draw_metric_scatter(float width, float height);
    void draw_rollout_view();
    void draw_similarity_view();
    void handle_keys();

    // Analysis off the UI thread (BackgroundJobs), keyed by what each result depends on.
    std::string importance_key() const;
    std::string rollout_key() const;
    std::string similarity_key() const;
    void start_importance_scan();
    // The importance scan of what is on screen (model, input, mask), once it ran.
    std::shared_ptr<const ImportanceScan> importance() const;
    // A progress bar and Cancel while the job under `key` runs; its error and Retry
    // (running `retry`) after it failed or was cancelled.
    void draw_job_progress(BackgroundJobs& jobs, const std::string& key, const char* what,
                           const BackgroundJobs::Work& retry);
    BackgroundJobs::Work importance_work() const;

    // Opens another model (built-in name or folder); the worker loads it.
    void open_model(const std::string& name);
    // Stops the load in progress and returns to the model the worker still holds.
    void cancel_loading();
    // The snapshot on screen belongs to another model than the one chosen (loading, or
    // its first result not in yet): its views are not drawn as if they were the new one's.
    bool showing_other_model() const;
    void remember_model(const std::string& name);
    void remember_file(const std::string& path);
    void save_recent();
    // Predictions rows for the snapshot on screen, recomputed when it or the query changes.
    const std::vector<PredictionTable>& prediction_tables(const PredictionTarget& target);

    // The texture of weights (any [R, C] map of the shown result, shown_: a big one is built
    // on another thread that holds the result) drawn with the current colour map and scale.
    const ui::HeatmapTexture& weights_texture(const std::string& key, const Matrix& weights);
    const ui::HeatmapTexture& signed_texture(const std::string& key, const Matrix& values, const Mask* allowed);
    const Mask* mask() const;
    // The picture on screen with `heat` (one cell per patch of a grid_w x grid_h grid)
    // over it, at the cursor, as large as fits `room` keeping the grid's aspect (own
    // resolution may be any grid of whole patches). Returns where it went.
    struct PictureRect {
        ImVec2 origin;
        float width = 0.0f;
        float height = 0.0f;
    };
    PictureRect draw_picture_with_heat(const ui::HeatmapTexture& heat, int grid_w, int grid_h, ImVec2 room);
    // What head (layer, head) of the result on screen does: the role a demo model built it
    // to, else the role its metrics on this input show (core/head_roles: trained models).
    struct HeadCaption {
        std::string name;   // a word or two for the grid ("previous token"); empty: nothing to name
        std::string text;   // a line for the matrix view and tooltips
    };
    HeadCaption head_caption(int layer, int head) const;

    AppState state_;
    Worker worker_;
    std::uint64_t submitted_ = 0;
    Request last_request_;
    bool has_request_ = false;
    std::shared_ptr<const Snapshot> shown_;
    Colormap textures_colormap_ = Colormap::viridis;
    HeatScale textures_scale_ = HeatScale::shared;
    ui::TexturePool textures_;
    ui::FilePicker file_picker_{ui::PickKind::image_file};
    ui::FilePicker model_picker_{ui::PickKind::model_folder};
    std::string image_edit_;          // the image path field while typing
    std::string image_edit_source_;   // the applied path image_edit_ was last reset from
    std::string error_;               // the newest request's compute error
    std::string model_error_;         // the last model that failed to load; kept until another is opened
    std::string status_note_;         // one line for the status bar ("loading cancelled", ...)
    std::uint64_t answer_generation_ = 0;
    std::optional<LoadProgress> loading_;   // the worker's model load, as of this frame
    std::string recent_path_;
    RecentLists recent_;
    // prediction_tables' cache: for which snapshot (generation) and rows.
    std::uint64_t predictions_generation_ = 0;
    std::vector<int> predictions_rows_;
    std::vector<PredictionTable> predictions_;
    // Jobs the user starts (the importance scan) and jobs the views start while shown
    // (rollout, similarity, the compare view's head pairs) run apart: opening a tab never
    // stops a scan.
    BackgroundJobs scan_jobs_;
    BackgroundJobs view_jobs_;
    // The rollout on screen: kept while a slider's newer rollout computes (same result only).
    std::shared_ptr<const Matrix> rollout_shown_;
    std::uint64_t rollout_shown_generation_ = 0;
    bool scan_on_first_result_ = false;   // --scan-importance
    bool showcase_on_first_result_ = false;
    std::optional<StartChoices> start_choices_;   // until the first result is in
    std::vector<std::string> start_notes_;        // what of them did not fit (until another model)
    // The compare view's head-pair divergences of two layers, and for which result / layers.
    std::string layer_means_key_;
    Matrix layer_mean_a_;
    Matrix layer_mean_b_;
    std::string compare_image_edit_;   // input B's path while typing (applied on Enter)
};

}   // namespace headscope::gui
