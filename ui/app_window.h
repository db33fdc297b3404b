#pragma once
// The window's content: the user's choices (session/app_state.h), the worker computing
// them, the snapshot on screen, and the frame that lays out the controls, the views'
// tabs, the predictions and the status bar. Threads and what crosses between them:
// session/worker.h and docs/architecture.md.

#include "session/app_state.h"
#include "session/background_job.h"
#include "session/recent.h"
#include "session/undo_history.h"
#include "session/worker.h"
#include "ui/panels/controls_panel.h"
#include "ui/panels/export_dialog.h"
#include "ui/panels/menu_bar.h"
#include "ui/panels/predictions_panel.h"
#include "ui/panels/session_dialog.h"
#include "ui/panels/window_status.h"
#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/texture_pool.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::ui {

class AppWindow {
public:
    // `recent_path`: the recent models / files list (session/recent.h); empty keeps none.
    AppWindow(session::AppState initial, std::string recent_path);

    // Once per frame: submits what changed, swaps in a finished result.
    void update();
    // `previous_frame`: the previous frame from its start (after any sleep) to its swap;
    // what it left of a 20 ms frame goes to rebuilding textures (texture_pool.h).
    void draw(std::chrono::steady_clock::duration previous_frame);

    // The user's choices, for the controls' transitions (session/app_state.h) from outside
    // the window's own widgets: the soak's scripted user, --bench-recompute.
    session::AppState& state() { return state_; }
    // The snapshot on screen (null before the first); it may belong to the previous model
    // while another loads (showing_chosen_model()).
    const session::Snapshot* shown() const { return shown_.get(); }
    bool showing_chosen_model() const { return !showing_other_model(); }

    // What the Model control, Open... and a dropped folder do: opens another model.
    void open_model(const std::string& name);
    // What Cancel and Esc do: stops the load and returns to the model the worker holds.
    void cancel_loading();
    // What the status bar's Cancel and Esc do while a long input computes: stops it; the
    // last result stays on screen.
    void cancel_computing();
    // A file dropped on the window: an image, or a model folder (config.json inside).
    void on_drop(const std::string& path);
    // A picture typed or picked in the controls (image models only).
    void open_picture(const std::string& path);
    // The Heads view's "Scan head importance" for what is on screen.
    void start_importance_scan();
    bool loading() const { return loading_.has_value(); }

    // Starts the head-importance scan as soon as the first result is in (--scan-importance).
    void scan_importance_when_ready() { scan_on_first_result_ = true; }
    // Selects the most nameable head (session/app_state.h: showcase_head) once the first
    // result is in: a first launch opens on a learned head doing something, not on 0.0.
    void select_showcase_head_when_ready() { showcase_on_first_result_ = true; }
    // Checks the command line's choices against the model once its first result is in,
    // and says (above the views, and on stderr) which of them did not fit.
    void check_start_choices_when_ready(session::StartChoices choices) { start_choices_ = std::move(choices); }

    // `wake` is called from another thread when a result arrives, or a long run finishes
    // a layer (four times a second at most: layers can land faster than a frame is
    // drawn, and each frame takes cores from the run), while the loop sleeps.
    void set_wake(const std::function<void()>& wake);
    // A key pressed (or repeating) with these modifiers, as the platform reports it, in
    // the backend's key codes (ImGui::GetKeyIndex): the window's shortcuts act on these
    // events, so a tap that goes down and up within one slow frame still counts.
    struct KeyPress {
        int key = 0;
        bool ctrl = false;
        bool shift = false;
        bool repeat = false;
    };
    void on_key(const KeyPress& press) { key_presses_.push_back(press); }
    // Everything a session file keeps: the choices, and each view's own settings now.
    session::AppState session_state() const;
    // Whether a run's progress (not input, not a result) woke the loop since last asked.
    bool take_progress_wake();
    // Gives the view of --view name `view` `settings` (a JSON object's text: the fields it
    // names) over its own (View::restore). False, the reason in the status line, when they
    // could not be read (no such view, a bad field): nothing changes then.
    bool restore_view(const std::string& view, const std::string& settings);
    // The same, and opens its tab (the Heads view's "Show on the Model grid").
    bool show_view(const std::string& view, const std::string& settings);
    // The window's title: the program, the chosen model and the start of its input.
    std::string title() const;
    // File > Quit (or Ctrl+Q) was chosen: the program closes the window.
    bool quit_requested() const { return quit_requested_; }
    // True when the next frame would draw what the last one did, unless input or a result
    // arrives: no texture is still being rebuilt and nothing waits to be shown.
    bool still() const;
    // True while the model or an analysis computes (their progress is on screen).
    bool working() const;
    // True while the model's run has every layer done and only its output is left (the
    // logits, the handing over): no analysis runs, and no progress line will say more.
    bool only_output_left() const;
    // True once the newest request has been answered and its result (or error) is shown,
    // and no analysis for it is still running.
    bool settled() const;
    // An error on screen: a model that failed to load, else the newest request's.
    const std::string& error() const { return model_error_.empty() ? error_ : model_error_; }

private:
    void take_latest();
    void take_answer();
    void run_start_hooks();
    void handle_keys();
    void act_on_key(const KeyPress& press);
    // Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y): the input, masks and disabled heads as they were.
    void undo();
    void redo();
    void open_export();
    // What the menu bar offers, and doing what was chosen in it.
    MenuState menu_state() const;
    void act_on(const MenuChoice& choice);
    void draw_messages();
    void draw_views();
    ViewContext view_context();
    // The shown snapshot as its maps of the chosen kind are shown (session/attention_kind.h):
    // what the views, the head controls and the export read. Made again when the snapshot
    // or the kind changes; the textures are then made again too.
    const std::shared_ptr<const session::Snapshot>& shown_kind();
    View* shown_view() const;
    // Views' settings both ways: a session's into the views, the views' into what a
    // session saves while the session window is open.
    void sync_view_settings();
    std::map<std::string, std::string> view_settings() const;
    // The snapshot on screen belongs to another model than the one chosen (loading, or
    // its first result not in yet): its views are not drawn as if they were the new one's.
    bool showing_other_model() const;
    // What the chosen model is: the shown result's, else the loaded model's before its
    // first result is in; null while it loads or after it failed to.
    const ModelInfo* chosen_model_info() const;
    WindowStatus status() const;
    void remember_model(const std::string& name);
    void remember_file(const std::string& path);
    void save_recent();

    session::AppState state_;
    session::UndoHistory history_;
    ExportDialog export_dialog_;
    SessionDialog session_dialog_;
    bool keys_open_ = false;    // Help > Keys and mouse
    bool about_open_ = false;   // Help > About
    bool quit_requested_ = false;
    session::Worker worker_;
    std::uint64_t submitted_ = 0;
    session::Request last_request_;
    bool has_request_ = false;
    bool took_result_ = false;   // since the last frame: the next frame may wait for its maps' textures
    std::chrono::steady_clock::duration last_frame_{};   // the previous frame's drawing, for the status bar
    std::shared_ptr<const session::Snapshot> shown_;
    std::shared_ptr<const session::Snapshot> shown_kind_;   // shown_kind(), of:
    const session::Snapshot* shown_kind_of_ = nullptr;
    session::AttentionKind shown_kind_kind_ = session::AttentionKind::decoder;
    Colormap textures_colormap_ = Colormap::viridis;
    session::HeatScale textures_scale_ = session::HeatScale::shared;
    TexturePool textures_;
    std::vector<std::unique_ptr<View>> views_;
    ControlsPanel controls_;
    // The controls panel's width at 1x (ui/widgets/ui_scale.h), moved by the splitter.
    static constexpr float default_controls_width = 340.0f;
    float controls_width_ = default_controls_width;
    PredictionsPanel predictions_;
    std::string error_;         // the newest request's compute error
    std::string model_error_;   // the last model that failed to load; kept until another is opened
    std::string status_note_;   // one line for the status bar ("loading cancelled", ...)
    std::uint64_t answer_generation_ = 0;
    std::uint64_t stopped_ = 0;                           // the last request whose computation the user stopped
    std::optional<session::LoadProgress> loading_;        // the worker's model load, as of this frame
    std::optional<session::ComputeProgress> computing_;   // the worker's computation, as of this frame
    std::optional<ModelInfo> loaded_info_;                // the chosen model's, once loaded, as of this frame
    MachineMemory memory_;                                // this process's and the machine's, for the status bar
    std::chrono::steady_clock::time_point memory_read_;
    std::string recent_path_;
    session::RecentLists recent_;
    // Jobs the user starts (the importance scan) and jobs the views start while shown
    // (rollout, similarity, the compare view's head pairs) run apart: opening a tab never
    // stops a scan.
    std::vector<KeyPress> key_presses_;                  // since the last frame (on_key)
    std::map<std::string, std::string> views_applied_;   // state_.view_settings as the views last had them
    // Set from the worker's thread when its progress wakes the loop (set_wake).
    std::shared_ptr<std::atomic<bool>> progress_woke_ = std::make_shared<std::atomic<bool>>(false);
    session::BackgroundJobs scan_jobs_;
    session::BackgroundJobs view_jobs_;
    bool scan_on_first_result_ = false;   // --scan-importance
    bool showcase_on_first_result_ = false;
    std::optional<session::StartChoices> start_choices_;   // until the first result is in
    std::vector<std::string> start_notes_;                 // what of them did not fit (until another model)
};

}   // namespace headscope::ui
