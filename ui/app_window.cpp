#include "ui/app_window.h"

#include "core/models/model_registry.h"
#include "ui/panels/loading_panel.h"
#include "ui/panels/status_bar.h"
#include "ui/views/view_list.h"
#include "ui/widgets/file_picker.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

namespace headscope::ui {

using namespace session;

namespace {

// At 1x (ui_scale.h).
constexpr float status_height = 26.0f;
constexpr float splitter_width = 6.0f;
constexpr float controls_min_width = 260.0f;
// How long a new result's first frame may wait for its big maps' textures (a 1,000 x 1,000
// map's levels: 16 ms alone under software rendering), once: past it, the old map is
// drawn and the new one goes up a frame later, as before.
constexpr std::chrono::milliseconds result_texture_wait{100};

// A vertical bar between the controls and the views: dragged, it moves the border; a
// double click puts it back. `width` is in 1x pixels, so it keeps its place when the
// content scale changes.
void draw_splitter(float& width, float default_width, float height) {
    ImGui::InvisibleButton("##controls-splitter", ImVec2(px(splitter_width), height));
    const bool hovered = ImGui::IsItemHovered();
    const bool active = ImGui::IsItemActive();
    if (hovered || active) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    if (active) width += ImGui::GetIO().MouseDelta.x / content_scale();
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) width = default_width;
    const ImVec2 a = ImGui::GetItemRectMin();
    const ImVec2 b = ImGui::GetItemRectMax();
    const float x = 0.5f * (a.x + b.x);
    const ImU32 colour = ImGui::GetColorU32(active ? ImGuiCol_SeparatorActive
                                                   : (hovered ? ImGuiCol_SeparatorHovered : ImGuiCol_Separator));
    ImGui::GetWindowDrawList()->AddLine(ImVec2(x, a.y + px(4.0f)), ImVec2(x, b.y - px(4.0f)), colour,
                                        active || hovered ? 2.0f : 1.0f);
}

}   // namespace

AppWindow::AppWindow(AppState initial, std::string recent_path)
    : state_(std::move(initial)), views_(make_views()), recent_path_(std::move(recent_path)) {
    RecentRead read = read_recent(recent_path_);
    recent_ = std::move(read.lists);
    if (!read.warning.empty()) {
        std::fprintf(stderr, "headscope: %s\n", read.warning.c_str());
        status_note_ = read.warning;
    }
}

View* AppWindow::shown_view() const {
    for (const auto& view : views_) {
        if (view->name() == state_.view) return view.get();
    }
    return views_.front().get();
}

void AppWindow::sync_view_settings() {
    if (state_.view_settings != views_applied_) {
        // A session was opened (or --session given): each view reads its own settings.
        for (const auto& view : views_) {
            const auto found = state_.view_settings.find(std::string(view->name()));
            if (found == state_.view_settings.end()) continue;
            if (const std::string why = view->restore(found->second); !why.empty()) {
                status_note_ = "session: view '" + found->first + "': " + why;
            }
        }
    } else if (session_dialog_.is_open()) {
        // What a session saved now keeps of the views: as they are this frame.
        state_.view_settings = view_settings();
    }
    views_applied_ = state_.view_settings;
}

bool AppWindow::restore_view(const std::string& view, const std::string& settings) {
    for (const auto& candidate : views_) {
        if (candidate->name() != view) continue;
        const std::string why = candidate->restore(settings);
        if (!why.empty()) status_note_ = "view '" + view + "': " + why;
        return why.empty();
    }
    status_note_ = "no view '" + view + "'";
    return false;
}

bool AppWindow::show_view(const std::string& view, const std::string& settings) {
    if (!restore_view(view, settings)) return false;
    state_.view = view;
    return true;
}

std::map<std::string, std::string> AppWindow::view_settings() const {
    std::map<std::string, std::string> settings;
    for (const auto& view : views_) {
        if (std::string own = view->settings(); !own.empty()) settings[std::string(view->name())] = std::move(own);
    }
    return settings;
}

session::AppState AppWindow::session_state() const {
    session::AppState state = state_;
    state.view_settings = view_settings();
    return state;
}

void AppWindow::update() {
    // Swap in a finished result first: a new model resizes the per-head flags, and the
    // request below then already carries them (no frame shows a stale result as settled).
    take_latest();
    take_answer();
    const Request request = make_request(state_, shown_view()->needs(state_));
    if (!has_request_ || !(request == last_request_)) {
        submitted_ = worker_.submit(request);
        last_request_ = request;
        has_request_ = true;
    }
    loading_ = worker_.loading();
    const std::optional<ModelChoice> in_use = worker_.model_in_use();
    loaded_info_ = in_use && *in_use == state_.model ? worker_.model_in_use_info() : std::nullopt;
    const Eigen::Index landed_before = computing_ && computing_->landed_thumbnails ? computing_->layers_done : -1;
    computing_ = worker_.computing();
    // A layer of a long run landed: the grid's textures are rebuilt with its thumbnails.
    if (computing_ && computing_->landed_thumbnails && computing_->layers_done != landed_before) textures_.invalidate();
    // /proc is read a few times a second, not every frame.
    if (const auto now = std::chrono::steady_clock::now(); now - memory_read_ > std::chrono::milliseconds(500)) {
        memory_ = machine_memory();
        memory_read_ = now;
    }
    run_start_hooks();
    if (textures_colormap_ != state_.colormap || textures_scale_ != state_.scale) {
        textures_colormap_ = state_.colormap;
        textures_scale_ = state_.scale;
        textures_.invalidate();
    }
}

void AppWindow::take_latest() {
    const auto latest = worker_.latest();
    if (!latest || latest == shown_) return;
    // A two-tower folder's towers are two networks under one name.
    const bool new_model =
        !shown_ || shown_->info.name != latest->info.name || shown_->model.tower != latest->model.tower ||
        shown_->info.n_layers != latest->info.n_layers || shown_->info.n_heads != latest->info.n_heads;
    const bool other_folder =
        !is_builtin_model(latest->model.name) && (!shown_ || shown_->model.name != latest->model.name);
    const bool had_model = shown_ != nullptr;
    // The kind's view of the last result shares its maps: let go of it first, so that the
    // worker, not this thread, frees them (dispose).
    shown_kind_.reset();
    shown_kind_of_ = nullptr;
    worker_.dispose(std::exchange(shown_, latest));
    took_result_ = true;
    if (new_model && had_model) {
        // Heads switched off and a custom mask were chosen for the last model's heads
        // and positions: another model starts without them (--disable, given before any
        // model, applies to the first).
        leave_model_choices(state_);
    }
    if (new_model) {
        if (!start_choices_) start_notes_.clear();   // they were about the model before
        fit_to_model(state_, shown_->info);
        for (const auto& view : views_) view->fit_to_model(shown_->info);
        scan_jobs_.forget_results();
        view_jobs_.forget_results();
    }
    const auto rows = static_cast<int>(shown_kind()->input.labels.size());   // the kind's rows
    fit_to_length(state_, rows);
    for (const auto& view : views_) view->fit_to_length(rows);
    if (other_folder) remember_model(shown_->model.name);
    textures_.invalidate();
}

void AppWindow::take_answer() {
    // How the newest answered request ended: a model that did not load leaves the worker
    // on the previous one, and the controls go back to it.
    const Answer answer = worker_.latest_answer();
    if (answer.generation == answer_generation_) return;
    answer_generation_ = answer.generation;
    error_.clear();
    switch (answer.failure) {
    case Failure::none: break;
    case Failure::compute:
        error_ = answer.error;
        // A picture that does not decode (its errors start with its path) is not offered again.
        if (!state_.image_path.empty() && answer.error.starts_with(state_.image_path + ":") &&
            forget_recent(recent_.files, state_.image_path)) {
            save_recent();
        }
        break;
    case Failure::load:
        // A model that did not load is not offered again either.
        if (!is_builtin_model(answer.model.name) && forget_recent(recent_.models, answer.model.name)) save_recent();
        if (answer.model == state_.model) {
            model_error_ = answer.error;
            return_to_model(state_, worker_.model_in_use());
        }
        break;
    case Failure::compute_cancelled:
        // Stopped by a newer request (nothing to say), or by Cancel / Esc: the last result
        // stays on screen until something changes.
        if (answer.generation == submitted_) {
            status_note_ = "stopped: the last result stays on screen";
            stopped_ = answer.generation;
        }
        break;
    case Failure::load_cancelled:
        // Stopped by a newer request for another model (nothing to do), or from outside
        // while this one is still wanted: go back as Cancel does.
        if (answer.generation == submitted_ && answer.model == state_.model) {
            return_to_model(state_, worker_.model_in_use());
            status_note_ = "loading cancelled";
        }
        break;
    }
}

void AppWindow::run_start_hooks() {
    // Each waits for the first result of the chosen model to the newest request.
    const bool first_result =
        shown_ && !showing_other_model() && shown_->generation == submitted_ && !shown_->numbers_pending;
    if (start_choices_ && first_result) {
        // The layer and the query are the kind shown's (its layers, its rows).
        start_notes_ = start_choice_notes(*start_choices_, shown_->info, state_.kind,
                                          static_cast<Eigen::Index>(shown_kind()->input.labels.size()));
        for (const std::string& note : start_notes_) std::fprintf(stderr, "headscope: %s\n", note.c_str());
        start_choices_.reset();
    }
    if (showcase_on_first_result_ && (!error_.empty() || !model_error_.empty())) showcase_on_first_result_ = false;
    if (showcase_on_first_result_ && first_result) {
        showcase_on_first_result_ = false;
        const Snapshot& kind = *shown_kind();   // the kind shown's heads (an encoder-decoder's other kinds too)
        if (const auto head = showcase_head(kind.metrics, kind.info.n_heads, kind.input.grid_width > 0)) {
            state_.layer = head->layer;
            state_.head = head->head;
        }
    }
    if (scan_on_first_result_ && first_result) {
        scan_on_first_result_ = false;
        start_importance_scan();
    }
}

void AppWindow::open_model(const std::string& name) {
    model_error_.clear();
    status_note_.clear();
    choose_model(state_, name);
}

void AppWindow::cancel_loading() {
    worker_.cancel_load();
    const std::optional<ModelChoice> in_use = worker_.model_in_use();
    if (in_use && *in_use == state_.model) return;   // it finished loading first: nothing to cancel
    return_to_model(state_, in_use);
    status_note_ = "loading cancelled";
}

void AppWindow::open_picture(const std::string& path) {
    const ModelInfo* chosen = chosen_model_info();
    if (chosen == nullptr || !chosen->takes_image) return;
    choose_picture(state_, path);
    remember_file(path);
}

void AppWindow::start_importance_scan() {
    if (!shown_ || showing_other_model()) return;
    view_context().start_importance_scan();
}

bool AppWindow::showing_other_model() const {
    return !shown_ || shown_->model.name != state_.model.name || shown_->model.tower != state_.model.tower;
}

std::string AppWindow::title() const {
    std::string title = "Headscope \u2014 " + model_display_name(state_.model.name);
    const ModelInfo* chosen = chosen_model_info();
    std::string input = chosen != nullptr && chosen->takes_image
                            ? std::filesystem::path(state_.image_path).filename().string()
                            : state_.text.substr(0, state_.text.find('\n'));
    if (input.size() > 48) {
        std::size_t cut = 45;
        while (cut > 0 && (static_cast<unsigned char>(input[cut]) & 0xC0) == 0x80) --cut;   // not inside a character
        input = input.substr(0, cut) + "...";
    }
    if (!input.empty()) title += " \u2014 " + input;
    return title;
}

const ModelInfo* AppWindow::chosen_model_info() const {
    if (!showing_other_model()) return &shown_->info;
    return loaded_info_ ? &*loaded_info_ : nullptr;
}

void AppWindow::remember_model(const std::string& name) {
    push_recent(recent_.models, recent_path_of(name));
    save_recent();
}

void AppWindow::remember_file(const std::string& path) {
    push_recent(recent_.files, recent_path_of(path));
    save_recent();
}

void AppWindow::save_recent() {
    if (recent_path_.empty()) return;
    try {
        write_recent(recent_path_, recent_);
    } catch (const Error& e) {
        // Not worth more than a line: the window works without the list.
        std::fprintf(stderr, "headscope: %s\n", e.what());
        status_note_ = e.what();
    }
}

bool AppWindow::still() const {
    // A result in but not yet taken (update() swaps it in) is a change to draw.
    return has_request_ && textures_.caught_up() && worker_.latest() == shown_;
}

void AppWindow::set_wake(const std::function<void()>& wake) {
    worker_.set_on_answer(wake);
    auto last = std::make_shared<std::atomic<std::int64_t>>(0);   // ms, steady clock
    worker_.set_on_progress([wake, last, flag = progress_woke_] {
        const std::int64_t now =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
                .count();
        std::int64_t before = last->load();
        if (now - before >= 250 && last->compare_exchange_strong(before, now)) {
            flag->store(true);   // the loop draws it when its refresh timeout is up (app/gui/run_window.cpp)
            wake();
        }
    });
}

bool AppWindow::take_progress_wake() { return progress_woke_->exchange(false); }

bool AppWindow::working() const { return worker_.busy() || scan_jobs_.busy() || view_jobs_.busy(); }

bool AppWindow::only_output_left() const {
    if (scan_jobs_.busy() || view_jobs_.busy()) return false;
    const std::optional<ComputeProgress> now = worker_.computing();
    return now && now->n_layers > 0 && now->layers_done >= now->n_layers;
}

bool AppWindow::settled() const {
    return has_request_ && !worker_.busy() && !scan_jobs_.busy() && !view_jobs_.busy() && !scan_on_first_result_ &&
           !showcase_on_first_result_ && textures_.caught_up() && worker_.answered() == submitted_ &&
           (!error_.empty() || stopped_ == submitted_ || (shown_ && shown_->generation == submitted_));
}

void AppWindow::on_drop(const std::string& path) {
    if (is_model_folder(path)) {
        open_model(path);
    } else if (open_dropped_file(state_, path)) {
        remember_file(path);
    } else {
        error_ = path + ": not an image file (expected PNG, JPEG, BMP, GIF or TGA) nor a model folder (config.json)";
    }
}

WindowStatus AppWindow::status() const {
    return {loading_,
            worker_.busy(),
            computing_,
            !error_.empty(),
            status_note_,
            memory_,
            std::chrono::duration<double, std::milli>(last_frame_).count()};
}

void AppWindow::cancel_computing() { worker_.cancel_compute(); }

ViewContext AppWindow::view_context() {
    WindowActions actions{
        .remember_file = [this](const std::string& path) { remember_file(path); },
        .show_view = [this](const std::string& view, const std::string& settings) { show_view(view, settings); },
    };
    ViewContext context(shown_kind(), state_, textures_, scan_jobs_, view_jobs_, std::move(actions));
    context.set_computing(&computing_);
    return context;
}

const std::shared_ptr<const Snapshot>& AppWindow::shown_kind() {
    if (shown_kind_of_ == shown_.get() && shown_kind_kind_ == state_.kind) return shown_kind_;
    const bool other_kind = shown_kind_of_ == shown_.get();
    shown_kind_ = kind_snapshot(shown_, state_.kind);
    shown_kind_of_ = shown_.get();
    shown_kind_kind_ = state_.kind;
    if (other_kind && shown_kind_) {
        // The same result, other maps (another kind's rows: the source's or the target's).
        textures_.invalidate();
        const auto rows = static_cast<int>(shown_kind_->input.labels.size());
        fit_to_length(state_, rows);
        for (const auto& view : views_) view->fit_to_length(rows);
    }
    return shown_kind_;
}

void AppWindow::handle_keys() {
    const std::vector<KeyPress> presses = std::exchange(key_presses_, {});
    if (ImGui::GetIO().WantTextInput) return;
    // Not behind an open pop-up (a file picker, the Model list): its keys are its own.
    if (ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel)) return;
    for (const KeyPress& press : presses) act_on_key(press);
}

void AppWindow::act_on_key(const KeyPress& press) {
    // Dear ImGui 1.86 indexes keys by the backend's codes: named keys through GetKeyIndex;
    // letters are GLFW's codes, their capitals in ASCII.
    const auto is = [&press](ImGuiKey key) { return press.key == ImGui::GetKeyIndex(key); };
    const bool first = !press.repeat;   // toggles and dialogs: not on auto-repeat
    if (is(ImGuiKey_Escape) && first) {
        if (loading_) cancel_loading();
        if (!loading_ && computing_) cancel_computing();
    }
    if (press.ctrl) {
        if (is(ImGuiKey_Z) && !press.shift) undo();
        if ((is(ImGuiKey_Z) && press.shift) || is(ImGuiKey_Y)) redo();
        if (!first) return;
        if (press.key == 'E') open_export();
        if (press.key == 'Q') quit_requested_ = true;
        if (press.key == 'O') session_dialog_.open_for_opening();
        if (press.key == 'S') session_dialog_.open_for_saving();
        if (press.key == 'L') controls_.focus_labels();
        return;
    }
    if (!shown_ || showing_other_model()) return;
    const Eigen::Index n_layers = shown_kind()->info.n_layers;
    if (is(ImGuiKey_UpArrow)) step_layer(state_, -1, n_layers);
    if (is(ImGuiKey_DownArrow)) step_layer(state_, 1, n_layers);
    if (is(ImGuiKey_LeftArrow)) step_head(state_, -1, shown_->info.n_heads);
    if (is(ImGuiKey_RightArrow)) step_head(state_, 1, shown_->info.n_heads);
    if (is(ImGuiKey_C) && first) state_.causal = !causal_on(state_, shown_->info);
}

void AppWindow::undo() {
    if (const std::optional<Edits> edits = history_.undo()) restore(state_, *edits);
}

void AppWindow::redo() {
    if (const std::optional<Edits> edits = history_.redo()) restore(state_, *edits);
}

void AppWindow::open_export() {
    if (!shown_ || showing_other_model()) return;
    export_dialog_.open(shown_kind(), shown_, state_, shown_view()->map_in_sight(), view_context().importance());
}

MenuState AppWindow::menu_state() const {
    MenuState menu;
    menu.has_result = shown_ && !showing_other_model();
    menu.can_undo = history_.can_undo();
    menu.can_redo = history_.can_redo();
    menu.any_head_disabled =
        state_.disabled_heads.any() || state_.disabled_encoder_heads.any() || state_.disabled_cross_heads.any();
    menu.any_pair_masked = !state_.forbidden.empty();
    menu.view = state_.view;
    return menu;
}

void AppWindow::act_on(const MenuChoice& choice) {
    if (!choice.view.empty()) state_.view = choice.view;
    switch (choice.action) {
    case MenuAction::none: break;
    case MenuAction::export_map: open_export(); break;
    case MenuAction::open_session: session_dialog_.open_for_opening(); break;
    case MenuAction::save_session: session_dialog_.open_for_saving(); break;
    case MenuAction::quit: quit_requested_ = true; break;
    case MenuAction::undo: undo(); break;
    case MenuAction::redo: redo(); break;
    case MenuAction::enable_all_heads:
        for (HeadMask* heads : {&state_.disabled_heads, &state_.disabled_encoder_heads, &state_.disabled_cross_heads})
            heads->enable_all();
        break;
    case MenuAction::clear_mask: clear_mask(state_); break;
    case MenuAction::show_keys: keys_open_ = true; break;
    case MenuAction::show_about: about_open_ = true; break;
    }
}

void AppWindow::draw(std::chrono::steady_clock::duration previous_frame) {
    last_frame_ = previous_frame;
    textures_.begin_frame(previous_frame);
    // A new result's first frame shows its maps, not the last result's for another frame.
    if (std::exchange(took_result_, false)) textures_.wait_for_results(result_texture_wait);
    handle_keys();
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    // No background of its own: the frame is cleared to its colour (app/gui/run_window.cpp). Under
    // software rendering a blended quad over the whole window cost most of a frame.
    ImGui::Begin("Headscope", nullptr,
                 ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                     ImGuiWindowFlags_MenuBar);
    act_on(draw_menu_bar(menu_state(), views_));
    const float body = ImGui::GetContentRegionAvail().y - px(status_height);
    // The views keep at least half the window; the controls what their boxes need.
    const float widest_controls = ImGui::GetContentRegionAvail().x * 0.5f / content_scale();
    controls_width_ = std::clamp(controls_width_, std::min(controls_min_width, widest_controls), widest_controls);
    ImGui::BeginChild("controls", ImVec2(px(controls_width_), body), true);
    const ControlsOutcome outcome = controls_.draw(state_, shown_.get(), chosen_model_info(), recent_);
    if (outcome.model_to_open) open_model(*outcome.model_to_open);
    if (outcome.file_opened) remember_file(*outcome.file_opened);
    // The layers and heads below are the shown model's, of the kind the controls above left.
    if (shown_ && !showing_other_model()) ControlsPanel::draw_heads(state_, *shown_kind());
    ImGui::EndChild();
    ImGui::SameLine(0.0f, 0.0f);
    draw_splitter(controls_width_, default_controls_width, body);
    ImGui::SameLine(0.0f, 0.0f);
    ImGui::BeginChild("views", ImVec2(0.0f, body), true);
    draw_messages();
    if (showing_other_model()) {
        // Loading another model, or its first result not in yet: the previous model's
        // views would carry its tokens and heads under the new model's name.
        const WindowStatus now = status();
        if (draw_loading_panel(shown_.get(), state_, now)) cancel_loading();
        if (!now.loading) draw_landed_layers(textures_, now, state_.model.name, state_.colormap);
    } else {
        draw_views();
    }
    ImGui::EndChild();
    if (draw_status_bar(shown_.get(), state_, status())) cancel_computing();
    ImGui::End();
    export_dialog_.draw(state_);
    sync_view_settings();
    session_dialog_.draw(state_);
    sync_view_settings();
    draw_help_windows(keys_open_, about_open_);
    // What this frame left is the undo history's next state. Typing in a box, or a button
    // held (a drag over the mask), is a gesture still going on: one step for all of it.
    const ImGuiIO& io = ImGui::GetIO();
    const bool in_gesture =
        io.WantTextInput || ImGui::IsMouseDown(ImGuiMouseButton_Left) || ImGui::IsMouseDown(ImGuiMouseButton_Right);
    history_.observe(state_.model, edits_of(state_), in_gesture, ImGui::GetTime());
    // The worker waits with the numbers until the maps are drawn (Worker::maps_on_screen).
    if (shown_ && shown_->numbers_pending && textures_.caught_up()) worker_.maps_on_screen(shown_->generation);
}

void AppWindow::draw_messages() {
    const auto lines = [](const std::vector<std::string>& texts, ImU32 colour, const char* prefix) {
        if (texts.empty()) return;
        ImGui::PushStyleColor(ImGuiCol_Text, colour);
        for (const std::string& text : texts) ImGui::TextWrapped("%s%s", prefix, text.c_str());
        ImGui::PopStyleColor();
        ImGui::Separator();
    };
    if (!model_error_.empty() || !error_.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
        if (!model_error_.empty()) ImGui::TextWrapped("%s", model_error_.c_str());
        if (!error_.empty()) ImGui::TextWrapped("%s", error_.c_str());
        ImGui::PopStyleColor();
        if (!model_error_.empty() && shown_ && !showing_other_model()) {
            ImGui::TextDisabled("(not loaded: %s stays open)", model_display_name(shown_->model.name).c_str());
        } else if (shown_) {
            ImGui::TextDisabled("(showing the last result that worked)");
        }
        ImGui::Separator();
    }
    lines(start_notes_, IM_COL32(255, 200, 90, 255), "");
    // E.g. NaN in a weight: the model loads, and its maps draw the cells it reaches in the
    // colormap's not-finite colour; this says which tensor is to blame.
    if (shown_ && !showing_other_model()) lines(shown_->info.warnings, IM_COL32(255, 200, 90, 255), "warning: ");
}

void AppWindow::draw_views() {
    const PredictionTarget target = prediction_target(*shown_, decoder_query(state_));
    const float predictions_height = PredictionsPanel::height(*shown_, target);
    ImGui::BeginChild("view", ImVec2(0.0f, -predictions_height), false);
    if (ImGui::BeginTabBar("views")) {
        ViewContext context = view_context();
        for (const auto& view : views_) {
            // The tab follows state_.view (set by --view or a click).
            const bool chosen = view->name() == state_.view;
            const bool open = ImGui::BeginTabItem(view->title(), nullptr, chosen ? ImGuiTabItemFlags_SetSelected : 0);
            if (ImGui::IsItemClicked()) state_.view = std::string(view->name());
            if (!open) continue;
            view->draw(context);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::EndChild();
    if (target.kind != PredictionKind::none) {
        ImGui::BeginChild("predictions", ImVec2(0.0f, 0.0f), true);
        predictions_.draw(*shown_, state_);
        ImGui::EndChild();
    }
}

}   // namespace headscope::ui
