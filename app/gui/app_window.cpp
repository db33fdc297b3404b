#include "app/gui/app_window.h"

#include "app/gui/draw_helpers.h"
#include "core/analysis/head_compare.h"
#include "core/analysis/head_roles.h"
#include "core/models/model_registry.h"
#include "core/render/heatmap_image.h"
#include "ui/cell_under.h"
#include "ui/heatmap_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace headscope::gui {

namespace {

constexpr float controls_width = 340.0f;
constexpr float status_height = 26.0f;
constexpr int n_predictions = 5;

// The predictions panel's bars: the run on screen (with its disabled heads) and the
// intact model beside it, each on a track of its own colour (also what the GUI tests count).
constexpr ImU32 prediction_bar = IM_COL32(255, 166, 48, 255);
constexpr ImU32 prediction_track = IM_COL32(70, 52, 30, 255);
constexpr ImU32 intact_bar = IM_COL32(86, 180, 233, 255);
constexpr ImU32 intact_track = IM_COL32(28, 58, 76, 255);
constexpr float bar_width = 120.0f;

// One colour per head in the tokens view (matplotlib's tab10, colour-blind friendlier
// than a rainbow).
constexpr ImU32 head_colours[] = {
    IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),  IM_COL32(44, 160, 44, 255),
    IM_COL32(214, 39, 40, 255),   IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
    IM_COL32(227, 119, 194, 255), IM_COL32(188, 189, 34, 255),
};

// A path as the recent lists keep it: absolute, normalised, no trailing slash.
std::string absolute_path(const std::string& path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(path, ec);
    if (ec) return path;
    p = p.lexically_normal();
    std::string text = p.string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
}

// A probability as a bar on its track, at the cursor, one text line high.
void probability_bar(float probability, ImU32 bar, ImU32 track) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float height = ImGui::GetTextLineHeight();
    const float p = std::isfinite(probability) ? std::clamp(probability, 0.0f, 1.0f) : 0.0f;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    // Whole pixels: flat colours without blended edges.
    const float x0 = std::floor(origin.x);
    const float y0 = std::floor(origin.y + 2.0f);
    const float y1 = std::floor(origin.y + height - 1.0f);
    draw->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + bar_width, y1), track);
    draw->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + std::round(bar_width * p), y1), bar);
    ImGui::Dummy(ImVec2(bar_width, height));
}

// Maps of at least this many cells are coloured off the window's thread (texture_pool.h):
// 256 x 256 takes ~1 ms on a quiet core, a frame's share; 1024 x 1024 took 40-80 ms.
constexpr Eigen::Index background_cells = 256 * 256;

// A map's texture levels under the colour map and scale.
ui::MipLevels weights_levels(const Matrix& weights, const Mask* allowed, Colormap map, HeatScale scale) {
    switch (scale) {
    case HeatScale::per_head:
        return ui::heatmap_mip_levels(weights, allowed, map, std::max(weights.maxCoeff(), 1e-12f));
    case HeatScale::log: {
        // log(1 + 999 w) / log(1000): 0 -> 0, 0.001 -> 0.1, 1 -> 1.
        const Matrix lifted = weights.unaryExpr([](float w) { return std::log1p(999.0f * w) / std::log(1000.0f); });
        return ui::heatmap_mip_levels(lifted, allowed, map, 1.0f);
    }
    case HeatScale::shared: break;
    }
    return ui::heatmap_mip_levels(weights, allowed, map, 1.0f);
}

}   // namespace

AppWindow::AppWindow(AppState initial, std::string recent_path)
    : state_(std::move(initial)), recent_path_(std::move(recent_path)) {
    RecentRead read = read_recent(recent_path_);
    recent_ = std::move(read.lists);
    if (!read.warning.empty()) {
        std::fprintf(stderr, "headscope: %s\n", read.warning.c_str());
        status_note_ = read.warning;
    }
}

const Mask* AppWindow::mask() const { return shown_ && shown_->trace.mask ? &*shown_->trace.mask : nullptr; }

void AppWindow::update() {
    // Swap in a finished result first: a new model resizes the per-head flags, and the
    // request below then already carries them (no frame shows a stale result as settled).
    const auto latest = worker_.latest();
    if (latest && latest != shown_) {
        const bool new_model = !shown_ || shown_->info.name != latest->info.name ||
                               shown_->info.n_layers != latest->info.n_layers ||
                               shown_->info.n_heads != latest->info.n_heads;
        const bool other_folder =
            !is_builtin_model(latest->model.name) && (!shown_ || shown_->model.name != latest->model.name);
        const bool had_model = shown_ != nullptr;
        worker_.dispose(std::exchange(shown_, latest));
        if (new_model && had_model) {
            // Heads switched off and a custom mask were chosen for the last model's heads
            // and positions: another model starts without them (--disable, given before
            // any model, applies to the first).
            leave_model_choices(state_);
        }
        if (new_model) {
            if (!start_choices_) start_notes_.clear();   // they were about the model before
            fit_to_model(state_, shown_->info.n_layers, shown_->info.n_heads);
            scan_jobs_.forget_results();
            view_jobs_.forget_results();
        }
        fit_to_length(state_, static_cast<int>(shown_->input.labels.size()));
        if (other_folder) remember_model(shown_->model.name);
        textures_.invalidate();
    }
    // How the newest answered request ended: a model that did not load leaves the worker
    // on the previous one, and the controls go back to it.
    const Answer answer = worker_.latest_answer();
    if (answer.generation != answer_generation_) {
        answer_generation_ = answer.generation;
        error_.clear();
        switch (answer.failure) {
        case Failure::none: break;
        case Failure::compute: error_ = answer.error; break;
        case Failure::load:
            if (answer.model == state_.model) {
                model_error_ = answer.error;
                return_to_model(state_, worker_.model_in_use());
            }
            break;
        case Failure::load_cancelled:
            // Stopped by a newer request for another model (nothing to do), or from
            // outside while this one is still wanted: go back as Cancel does.
            if (answer.generation == submitted_ && answer.model == state_.model) {
                return_to_model(state_, worker_.model_in_use());
                status_note_ = "loading cancelled";
            }
            break;
        }
    }
    const Request request = make_request(state_);
    if (!has_request_ || !(request == last_request_)) {
        submitted_ = worker_.submit(request);
        last_request_ = request;
        has_request_ = true;
    }
    loading_ = worker_.loading();
    if (start_choices_ && shown_ && !showing_other_model() && shown_->generation == submitted_) {
        start_notes_ =
            start_choice_notes(*start_choices_, shown_->info, static_cast<Eigen::Index>(shown_->input.labels.size()));
        for (const std::string& note : start_notes_) std::fprintf(stderr, "headscope: %s\n", note.c_str());
        start_choices_.reset();
    }
    if (showcase_on_first_result_ && (!error_.empty() || !model_error_.empty())) showcase_on_first_result_ = false;
    if (showcase_on_first_result_ && shown_ && !showing_other_model() && shown_->generation == submitted_) {
        showcase_on_first_result_ = false;
        if (const auto head = showcase_head(shown_->metrics, shown_->info.n_heads, shown_->input.grid_width > 0)) {
            state_.layer = head->layer;
            state_.head = head->head;
        }
    }
    if (scan_on_first_result_ && shown_ && !showing_other_model() && shown_->generation == submitted_) {
        scan_on_first_result_ = false;
        start_importance_scan();
    }
    if (textures_colormap_ != state_.colormap || textures_scale_ != state_.scale) {
        textures_colormap_ = state_.colormap;
        textures_scale_ = state_.scale;
        textures_.invalidate();
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

bool AppWindow::showing_other_model() const { return !shown_ || shown_->model.name != state_.model.name; }

void AppWindow::remember_model(const std::string& name) {
    push_recent(recent_.models, absolute_path(name));
    save_recent();
}

void AppWindow::remember_file(const std::string& path) {
    push_recent(recent_.files, absolute_path(path));
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

bool AppWindow::working() const { return worker_.busy() || scan_jobs_.busy() || view_jobs_.busy(); }

bool AppWindow::settled() const {
    return has_request_ && !worker_.busy() && !scan_jobs_.busy() && !view_jobs_.busy() && !scan_on_first_result_ &&
           !showcase_on_first_result_ && textures_.caught_up() && worker_.answered() == submitted_ &&
           (!error_.empty() || (shown_ && shown_->generation == submitted_));
}

void AppWindow::on_drop(const std::string& path) {
    if (ui::is_model_folder(path)) {
        open_model(path);
    } else if (open_dropped_file(state_, path)) {
        remember_file(path);
    } else {
        error_ = path + ": not an image file (expected PNG, JPEG, BMP, GIF or TGA) nor a model folder (config.json)";
    }
}

const ui::HeatmapTexture& AppWindow::weights_texture(const std::string& key, const Matrix& weights) {
    if (weights.size() < background_cells) {
        return textures_.get(key, [&] { return weights_levels(weights, mask(), state_.colormap, state_.scale); });
    }
    // Built after this frame, on another thread, from the shown result itself: the job owns
    // it (shared_ptr aliases of the map and the mask), so a result the window drops meanwhile
    // lives until the job is done, and the job lets go of it on its own thread (the last
    // owner of a GPT-2 result at T = 1024 frees a gigabyte). Not from a copy: a 4 MB copy
    // made on the window's thread just as the worker freed the previous result took 20-33
    // ms, its page faults queued behind the worker's unmapping.
    return textures_.get_in_background(key, [&]() -> ui::TexturePool::BackgroundJob {
        std::shared_ptr<const Matrix> map(shown_, &weights);
        std::shared_ptr<const Mask> allowed = mask() != nullptr ? std::shared_ptr<const Mask>(shown_, mask()) : nullptr;
        return [map = std::move(map), allowed = std::move(allowed), colormap = state_.colormap,
                scale = state_.scale]() mutable {
            const std::shared_ptr<const Matrix> held_map = std::move(map);
            const std::shared_ptr<const Mask> held_mask = std::move(allowed);
            return weights_levels(*held_map, held_mask.get(), colormap, scale);
        };
    });
}

const ui::HeatmapTexture& AppWindow::signed_texture(const std::string& key, const Matrix& values, const Mask* allowed) {
    return textures_.get(key, [&] {
        // Diverging: 0 in the middle, the largest |value| at either end.
        float bound = 0.0f;
        for (Eigen::Index i = 0; i < values.size(); ++i) {
            if (std::isfinite(values.data()[i])) bound = std::max(bound, std::abs(values.data()[i]));
        }
        bound = std::max(bound, 1e-12f);
        Matrix shifted = values.unaryExpr([bound](float v) { return std::isfinite(v) ? 0.5f + 0.5f * v / bound : v; });
        // The masked scores hold -inf where the mask forbids: drawn as masked (grey, as the
        // legend says), not as "not finite", which is checked first and kept for the rest.
        if (allowed != nullptr && allowed->rows() == values.rows() && allowed->cols() == values.cols()) {
            shifted = allowed->select(shifted.array(), 0.5f).matrix();
        }
        return ui::heatmap_mip_levels(shifted, allowed, Colormap::coolwarm, 1.0f);
    });
}

void AppWindow::handle_keys() {
    if (ImGui::GetIO().WantTextInput) return;
    // Not behind an open pop-up (a file picker, the Model list): its keys are its own.
    if (ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId | ImGuiPopupFlags_AnyPopupLevel)) return;
    // Dear ImGui 1.86 indexes keys by the backend's codes: translate through GetKeyIndex.
    const auto pressed = [](ImGuiKey key, bool repeat = true) {
        return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), repeat);
    };
    if (loading_ && pressed(ImGuiKey_Escape, false)) cancel_loading();
    if (!shown_ || showing_other_model()) return;
    if (pressed(ImGuiKey_UpArrow)) step_layer(state_, -1, shown_->info.n_layers);
    if (pressed(ImGuiKey_DownArrow)) step_layer(state_, 1, shown_->info.n_layers);
    if (pressed(ImGuiKey_LeftArrow)) step_head(state_, -1, shown_->info.n_heads);
    if (pressed(ImGuiKey_RightArrow)) step_head(state_, 1, shown_->info.n_heads);
    if (pressed(ImGuiKey_C, false)) state_.causal = !causal_on(state_, shown_->info);   // a toggle: no auto-repeat
}

void AppWindow::draw(std::chrono::steady_clock::duration previous_frame) {
    textures_.begin_frame(previous_frame);
    handle_keys();
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    // No background of its own: the frame is cleared to its colour (main.cpp). Under
    // software rendering a blended quad over the whole window cost 7-9 ms of every frame
    // (ViT-B/16 model view: 21 -> 12.5 ms a frame, swap included).
    ImGui::Begin("Headscope", nullptr,
                 ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus);
    const float body = ImGui::GetContentRegionAvail().y - status_height;
    ImGui::BeginChild("controls", ImVec2(controls_width, body), true);
    draw_controls();
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("views", ImVec2(0.0f, body), true);
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
    if (!start_notes_.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 200, 90, 255));
        for (const std::string& note : start_notes_) ImGui::TextWrapped("%s", note.c_str());
        ImGui::PopStyleColor();
        ImGui::Separator();
    }
    if (shown_ && !showing_other_model() && !shown_->info.warnings.empty()) {
        // E.g. NaN in a weight: the model loads, and its maps draw the cells it reaches
        // in the colormap's not-finite colour; this says which tensor is to blame.
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 200, 90, 255));
        for (const auto& warning : shown_->info.warnings) ImGui::TextWrapped("warning: %s", warning.c_str());
        ImGui::PopStyleColor();
        ImGui::Separator();
    }
    if (showing_other_model()) {
        // Loading another model, or its first result not in yet: the previous model's
        // views would carry its tokens and heads under the new model's name.
        draw_loading();
    } else {
        const PredictionTarget target = prediction_target(*shown_, state_.query);
        const float line = ImGui::GetTextLineHeightWithSpacing();
        const float predictions_height = target.kind == PredictionKind::none
                                             ? 0.0f
                                             : line * (n_predictions + 2.5f) + ImGui::GetStyle().WindowPadding.y * 2;
        ImGui::BeginChild("view", ImVec2(0.0f, -predictions_height), false);
        if (ImGui::BeginTabBar("views")) {
            constexpr View views[] = {View::matrix, View::tokens, View::image,   View::model,     View::compare,
                                      View::stages, View::heads,  View::rollout, View::similarity};
            constexpr const char* titles[] = {"Matrix", "Tokens", "Image",   "Model",     "Compare",
                                              "Stages", "Heads",  "Rollout", "Similarity"};
            static_assert(std::size(views) == std::size(titles));
            for (std::size_t i = 0; i < std::size(views); ++i) {
                // The tab follows state_.view (set by --view or a click).
                const ImGuiTabItemFlags flags = state_.view == views[i] ? ImGuiTabItemFlags_SetSelected : 0;
                bool open = ImGui::BeginTabItem(titles[i], nullptr, flags);
                if (ImGui::IsItemClicked()) state_.view = views[i];
                if (!open) continue;
                switch (views[i]) {
                case View::matrix: draw_matrix_view(); break;
                case View::tokens: draw_tokens_view(); break;
                case View::image: draw_image_view(); break;
                case View::model: draw_model_view(); break;
                case View::compare: draw_compare_view(); break;
                case View::stages: draw_stages_view(); break;
                case View::heads: draw_heads_view(); break;
                case View::rollout: draw_rollout_view(); break;
                case View::similarity: draw_similarity_view(); break;
                }
                ImGui::EndTabItem();
            }
            ImGui::EndTabBar();
        }
        ImGui::EndChild();
        if (target.kind != PredictionKind::none) {
            ImGui::BeginChild("predictions", ImVec2(0.0f, 0.0f), true);
            draw_predictions();
            ImGui::EndChild();
        }
    }
    ImGui::EndChild();
    draw_status_bar();
    ImGui::End();
}

void AppWindow::draw_status_bar() {
    const ImGuiIO& io = ImGui::GetIO();
    std::string activity;
    if (loading_) {
        char text[64];
        std::snprintf(text, sizeof text, "   loading %.0f%%: ", 100.0 * loading_->fraction);
        activity.append(text).append(model_display_name(loading_->name));
    } else if (worker_.busy()) {
        activity = "   computing...";
    }
    if (!status_note_.empty()) activity.append("   ").append(status_note_);
    if (!shown_) {
        ImGui::Text("%s%s", worker_.busy() ? "" : "no result", activity.c_str());
        return;
    }
    ImGui::Text("%s   T = %zu   layer %d head %d   compute %.1f ms   frame %.1f ms%s", shown_->info.name.c_str(),
                shown_->input.labels.size(), state_.layer, state_.head, shown_->compute_ms,
                1000.0 / std::max(1.0f, io.Framerate), activity.c_str());
}

AppWindow::PictureRect AppWindow::draw_picture_with_heat(const ui::HeatmapTexture& heat, int grid_w, int grid_h,
                                                         ImVec2 room) {
    const ui::HeatmapTexture& picture = textures_.get("picture", [&] { return rgba_of(shown_->image); });
    const float aspect = static_cast<float>(grid_w) / static_cast<float>(grid_h);
    const float width = std::min(std::max(128.0f, room.x), std::max(128.0f, room.y) * aspect);
    const float height = width / aspect;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddImage(picture.id(), origin, ImVec2(origin.x + width, origin.y + height));
    // Translucent: the picture shows through the map.
    draw->AddImage(heat.id(), origin, ImVec2(origin.x + width, origin.y + height), ImVec2(0, 0), ImVec2(1, 1),
                   IM_COL32(255, 255, 255, 150));
    return {origin, width, height};
}

void AppWindow::draw_model_control() {
    ImGui::TextUnformatted("Model");
    bool browse = false;
    ImGui::SetNextItemWidth(-80.0f);
    if (ImGui::BeginCombo("##model", model_display_name(state_.model.name).c_str())) {
        ImGui::TextDisabled("built-in");
        for (const BuiltinModel& m : builtin_models()) {
            if (ImGui::Selectable(m.name.c_str(), m.name == state_.model.name)) open_model(m.name);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m.description.c_str());
        }
        if (!recent_.models.empty()) {
            ImGui::Separator();
            ImGui::TextDisabled("recent");
            for (const std::string& path : recent_.models) {
                const std::string label = model_display_name(path) + "##" + path;   // the path keeps ids apart
                if (ImGui::Selectable(label.c_str(), absolute_path(state_.model.name) == path)) open_model(path);
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
            }
        }
        ImGui::Separator();
        if (ImGui::Selectable("Open a model folder...")) browse = true;
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered() && !is_builtin_model(state_.model.name))
        ImGui::SetTooltip("%s", state_.model.name.c_str());
    ImGui::SameLine();
    if (ImGui::Button("Open...")) browse = true;
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("A Hugging Face checkpoint folder: config.json + model.safetensors (ViT, DeiT, GPT-2)");
    }
    if (browse)
        model_picker_.open(is_builtin_model(state_.model.name) ? std::string() : absolute_path(state_.model.name));
    if (const auto picked = model_picker_.draw_popup("models", recent_.models)) open_model(*picked);
}

void AppWindow::draw_loading() {
    if (!loading_) {
        if (worker_.busy() || error_.empty()) {
            ImGui::Text("Computing %s ...", model_display_name(state_.model.name).c_str());
        } else {
            // Loaded, but its first result failed (an input too long for it, ...).
            ImGui::TextWrapped("%s has no result yet: its views appear once the input above works for it.",
                               model_display_name(state_.model.name).c_str());
        }
        return;
    }
    ImGui::Text("Loading %s", model_display_name(loading_->name).c_str());
    if (!is_builtin_model(loading_->name)) ImGui::TextDisabled("%s", loading_->name.c_str());
    char overlay[32];
    std::snprintf(overlay, sizeof overlay, "%.0f%%", 100.0 * loading_->fraction);
    ImGui::ProgressBar(static_cast<float>(loading_->fraction), ImVec2(360.0f, 0.0f), overlay);
    ImGui::SameLine();
    if (ImGui::Button("Cancel (Esc)")) cancel_loading();
    if (shown_) {
        ImGui::TextDisabled("%s stays loaded until this one is in; Cancel keeps it.",
                            model_display_name(shown_->model.name).c_str());
    }
}

const std::vector<PredictionTable>& AppWindow::prediction_tables(const PredictionTarget& target) {
    if (predictions_generation_ != shown_->generation || predictions_rows_ != target.rows) {
        predictions_.clear();
        for (const int row : target.rows) predictions_.push_back(prediction_table(*shown_, row, n_predictions));
        predictions_generation_ = shown_->generation;
        predictions_rows_ = target.rows;
    }
    return predictions_;
}

void AppWindow::draw_predictions() {
    const PredictionTarget target = prediction_target(*shown_, state_.query);
    const auto& labels = shown_->input.labels;
    int n_disabled = 0;
    for (const auto& layer : state_.disabled_heads)
        n_disabled += static_cast<int>(std::count(layer.begin(), layer.end(), true));
    const char* hint = "  (click a token in the Matrix or Tokens view to choose the position)";
    switch (target.kind) {
    case PredictionKind::none: return;
    case PredictionKind::next_token: {
        const int t = target.rows.front();
        ImGui::Text("Next token after \"%s\" (position %d of %zu)",
                    printable_label(labels[static_cast<std::size_t>(t)]).c_str(), t, labels.size());
        ImGui::SameLine();
        if (shown_->causal) {
            ImGui::TextDisabled("%s", hint);
        } else {
            // A language model without its mask sees the very tokens it is asked to predict.
            ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.4f, 1.0f),
                               "  (causal mask off: each position sees the next token)");
        }
        break;
    }
    case PredictionKind::fill_in:
        if (target.rows.empty()) {
            ImGui::TextUnformatted("What the model would put at a position: click a token in the Matrix or Tokens view "
                                   "(or write [MASK] in the sentence).");
            return;
        }
        ImGui::TextUnformatted("Fill-ins");
        ImGui::SameLine();
        ImGui::TextDisabled("%s", hint);
        break;
    case PredictionKind::classes: ImGui::TextUnformatted("Top classes"); break;
    }
    const std::vector<PredictionTable>& tables = prediction_tables(target);
    const bool compare = shown_->ablated && !tables.empty() && !tables.front().intact.empty();
    if (compare && shown_->effect && shown_->effect->measure == EffectMeasure::kl_divergence) {
        char text[96];
        std::snprintf(text, sizeof text,
                      shown_->info.classifier ? "   KL(intact || ablated) = %.4g nats, over the classes"
                                              : "   KL(intact || ablated) = %.4g nats, mean over positions",
                      shown_->effect->value);
        // Beside the heading where it fits, else under it: never cut at the panel's edge.
        ImGui::SameLine();
        if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(text).x) ImGui::NewLine();
        ImGui::TextDisabled("%s", text);
    }
    const float width = ImGui::GetContentRegionAvail().x / static_cast<float>(std::max<std::size_t>(1, tables.size()));
    for (std::size_t n = 0; n < tables.size(); ++n) {
        const PredictionTable& table = tables[n];
        if (n > 0) ImGui::SameLine();
        ImGui::BeginGroup();
        ImGui::PushID(static_cast<int>(n));
        const int columns = compare ? 7 : 3;
        if (ImGui::BeginTable("top", columns, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX,
                              ImVec2(width - 8.0f, 0.0f))) {
            const float label_width =
                std::clamp((width - (compare ? 2.0f : 1.0f) * (bar_width + 70.0f) - 80.0f) / (compare ? 2.0f : 1.0f),
                           60.0f, 220.0f);
            if (compare) {
                ImGui::TableSetupColumn("intact", ImGuiTableColumnFlags_WidthFixed, label_width);
                ImGui::TableSetupColumn("p0", ImGuiTableColumnFlags_WidthFixed, bar_width);
                ImGui::TableSetupColumn("%0", ImGuiTableColumnFlags_WidthFixed, 50.0f);
            }
            ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthFixed, label_width);
            ImGui::TableSetupColumn("p", ImGuiTableColumnFlags_WidthFixed, bar_width);
            ImGui::TableSetupColumn("%", ImGuiTableColumnFlags_WidthFixed, 50.0f);
            if (compare) ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, 80.0f);
            if (compare || tables.size() > 1) {
                ImGui::TableNextRow();
                if (compare) {
                    ImGui::TableNextColumn();
                    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(intact_bar), "intact model");
                    ImGui::TableNextColumn();
                    ImGui::TableNextColumn();
                }
                ImGui::TableNextColumn();
                if (compare) {
                    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(prediction_bar), "%d head%s disabled", n_disabled,
                                       n_disabled == 1 ? "" : "s");
                } else {
                    ImGui::Text("at %d: \"%s\"", table.row,
                                printable_label(labels[static_cast<std::size_t>(table.row)]).c_str());
                }
                if (compare) {
                    ImGui::TableNextColumn();
                    ImGui::TableNextColumn();
                    ImGui::TableNextColumn();
                    ImGui::TextDisabled("vs intact");
                }
            }
            const auto quoted = [&](const std::string& label) {
                const std::string text = target.kind == PredictionKind::classes ? label : "\"" + label + "\"";
                ImGui::TextUnformatted(text.c_str());
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
            };
            for (std::size_t i = 0; i < table.shown.size(); ++i) {
                ImGui::TableNextRow();
                if (compare) {
                    ImGui::TableNextColumn();
                    if (i < table.intact.size()) {
                        const PredictionLine& line = table.intact[i];
                        quoted(line.label);
                        ImGui::TableNextColumn();
                        probability_bar(line.probability, intact_bar, intact_track);
                        ImGui::TableNextColumn();
                        ImGui::Text("%5.1f%%", 100.0f * line.probability);
                    } else {
                        ImGui::TableNextColumn();
                        ImGui::TableNextColumn();
                    }
                }
                const PredictionLine& line = table.shown[i];
                ImGui::TableNextColumn();
                quoted(line.label);
                ImGui::TableNextColumn();
                probability_bar(line.probability, prediction_bar, prediction_track);
                ImGui::TableNextColumn();
                ImGui::Text("%5.1f%%", 100.0f * line.probability);
                if (compare && std::isfinite(line.other)) {
                    // Percentage points against the intact model's probability of the same output.
                    ImGui::TableNextColumn();
                    const float change = 100.0f * (line.probability - line.other);
                    const ImVec4 colour = change >= 0.05f    ? ImVec4(0.45f, 0.85f, 0.45f, 1.0f)
                                          : change <= -0.05f ? ImVec4(1.0f, 0.5f, 0.45f, 1.0f)
                                                             : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
                    ImGui::TextColored(colour, "%+.1f pts", change);
                    if (ImGui::IsItemHovered()) ImGui::SetTooltip("intact model: %.2f%%", 100.0f * line.other);
                }
            }
            ImGui::EndTable();
        }
        if (table.shown.empty()) ImGui::TextDisabled("(no probabilities: the logits are not finite)");
        ImGui::PopID();
        ImGui::EndGroup();
    }
}

void AppWindow::draw_controls() {
    draw_model_control();
    if (is_toy_model(state_.model.name)) {
        // The built demo models' settings; a checkpoint's (a trained one's too) come from its config.json.
        bool structured = state_.model.config.init == ToyInit::structured;
        if (ImGui::Checkbox("Structured heads", &structured)) {
            state_.model.config.init = structured ? ToyInit::structured : ToyInit::random;
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Off: random weights, as the tutorials initialise them");
        int seed = static_cast<int>(state_.model.config.seed);
        if (ImGui::InputInt("Seed", &seed)) state_.model.config.seed = static_cast<std::uint64_t>(std::max(seed, 0));
        int size[3] = {static_cast<int>(state_.model.config.width), static_cast<int>(state_.model.config.n_heads),
                       static_cast<int>(state_.model.config.n_layers)};
        if (ImGui::InputInt3("E, H, L", size, ImGuiInputTextFlags_EnterReturnsTrue)) {
            state_.model.config.width = size[0];
            state_.model.config.n_heads = size[1];
            state_.model.config.n_layers = size[2];
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Model width, heads per layer and layers; Enter applies");
    }

    ImGui::Separator();
    const bool image_model = shown_ && shown_->info.takes_image;
    if (image_model) {
        ImGui::TextUnformatted("Image file (or drop one on the window)");
        ImGui::SetNextItemWidth(-90.0f);
        // The field edits its own copy; Enter applies it (a half-typed path is not loaded).
        if (image_edit_source_ != state_.image_path) {
            image_edit_ = state_.image_path;
            image_edit_source_ = state_.image_path;
        }
        if (ImGui::InputText("##image", &image_edit_, ImGuiInputTextFlags_EnterReturnsTrue)) {
            choose_picture(state_, image_edit_);
            remember_file(image_edit_);
        }
        ImGui::SameLine();
        if (const auto picked = file_picker_.draw("images", state_.image_path, recent_.files)) {
            choose_picture(state_, *picked);
            remember_file(*picked);
        }
    } else {
        // A checkpoint without tokenizer files reads token ids (the worker parses them).
        ImGui::TextWrapped("%s", shown_ && shown_->info.reads_ids_only
                                     ? "Token ids, comma-separated (the folder has no tokenizer files)"
                                     : "Sentence");
        ImGui::InputTextMultiline("##sentence", &state_.text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 5));
    }
    bool causal = shown_ ? causal_on(state_, shown_->info) : state_.causal.value_or(false);
    if (ImGui::Checkbox("Causal mask (C)", &causal)) state_.causal = causal;
    if (ImGui::IsItemHovered() && shown_) {
        ImGui::SetTooltip("%s is %s by default", shown_->info.name.c_str(),
                          shown_->info.causal ? "causal" : "not causal");
    }

    constexpr Colormap maps[] = {Colormap::viridis, Colormap::magma, Colormap::cividis, Colormap::greys};
    if (ImGui::BeginCombo("Colours", std::string(colormap_name(state_.colormap)).c_str())) {
        for (Colormap map : maps) {
            if (ImGui::Selectable(std::string(colormap_name(map)).c_str(), map == state_.colormap))
                state_.colormap = map;
        }
        ImGui::EndCombo();
    }
    int scale = static_cast<int>(state_.scale);
    ImGui::RadioButton("0..1", &scale, 0);
    ImGui::SameLine();
    ImGui::RadioButton("head max", &scale, 1);
    ImGui::SameLine();
    ImGui::RadioButton("log", &scale, 2);
    state_.scale = static_cast<HeatScale>(scale);

    if (showing_other_model()) return;   // the layers and heads below are the shown model's
    const ModelInfo& info = shown_->info;
    if (state_.disabled_heads.size() != static_cast<std::size_t>(info.n_layers)) return;
    ImGui::Separator();
    // Clamped even when typed (Ctrl+click): the layer indexes the per-layer flags below.
    ImGui::SliderInt("Layer (up/down)", &state_.layer, 0, static_cast<int>(info.n_layers) - 1, "%d",
                     ImGuiSliderFlags_AlwaysClamp);
    ImGui::TextUnformatted("Heads (left/right): show, disable = ablate");
    auto& disabled = state_.disabled_heads[static_cast<std::size_t>(state_.layer)];
    auto& hidden = state_.hidden_heads[static_cast<std::size_t>(state_.layer)];
    for (int h = 0; h < static_cast<int>(info.n_heads); ++h) {
        ImGui::PushID(h);
        if (ImGui::RadioButton(numbered("head ", h).c_str(), state_.head == h)) state_.head = h;
        ImGui::SameLine(100.0f);
        bool show = !hidden[static_cast<std::size_t>(h)];
        if (ImGui::Checkbox("show", &show)) hidden[static_cast<std::size_t>(h)] = !show;
        ImGui::SameLine(170.0f);
        bool off = disabled[static_cast<std::size_t>(h)];
        if (ImGui::Checkbox("disable", &off)) disabled[static_cast<std::size_t>(h)] = off;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ablate: zero this head's context; later layers recompute");
        ImGui::PopID();
    }
    ImGui::Separator();
    ImGui::TextWrapped("%s", info.description.c_str());
}

AppWindow::HeadCaption AppWindow::head_caption(int layer, int head) const {
    const auto l = static_cast<std::size_t>(layer);
    const auto h = static_cast<std::size_t>(head);
    const ModelInfo& info = shown_->info;
    if (!info.head_roles.empty() && !info.head_roles[l][h].empty()) {
        const std::string& role = info.head_roles[l][h];
        return {role.substr(0, role.find(':')), "built to: " + role};
    }
    const std::size_t index = l * static_cast<std::size_t>(info.n_heads) + h;
    if (index >= shown_->metrics.size()) return {};
    const std::optional<MeasuredRole> role = measured_role(shown_->metrics[index], shown_->input.grid_width > 0);
    if (!role) return {};
    char text[160];
    const bool vowel = std::string_view("aeiou").find(role->name.front()) != std::string_view::npos;
    std::snprintf(text, sizeof text, "learned: %s %s head (%s = %.2f on this input)", vowel ? "an" : "a",
                  role->name.c_str(), std::string(metric_name(role->metric)).c_str(), role->score);
    return {role->name, text};
}

void AppWindow::draw_matrix_view() {
    const int layer = state_.layer;
    const int head = state_.head;
    const HeadTrace& trace =
        shown_->trace.layers[static_cast<std::size_t>(layer)].heads[static_cast<std::size_t>(head)];
    ImGui::Text("Head %d.%d%s", layer, head,
                state_.disabled_heads[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)]
                    ? "  (disabled: zero context)"
                    : "");
    if (const HeadCaption caption = head_caption(layer, head); !caption.text.empty()) {
        ImGui::TextWrapped("%s", caption.text.c_str());
    }
    colour_legend(state_.colormap, "0", state_.scale == HeatScale::per_head ? "head max" : "1", true,
                  !std::isfinite(trace.weights.sum()));
    ImGui::Checkbox("Edit mask", &state_.editing_mask);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click or drag over cells to forbid / allow query -> key pairs");
    ImGui::SameLine();
    if (ImGui::Button("Clear mask")) clear_mask(state_);
    ImGui::SameLine();
    if (ImGui::Button("Invert mask")) invert_mask(state_, static_cast<int>(shown_->input.labels.size()));
    ImGui::SameLine();
    ImGui::TextDisabled(state_.editing_mask ? "drag over cells to forbid (right button: allow)"
                                            : "rows: queries, columns: keys; click a row to pin it");
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const ui::HeatmapLabels labels{shown_->input.labels, shown_->input.labels};
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const int clicked =
        ui::draw_heatmap("matrix", trace, mask(), weights_texture(numbered("w", layer, head), trace.weights), labels,
                         std::min(available.x, available.y), state_.editing_mask ? -1 : state_.query);
    if (state_.editing_mask) {
        // The cell under the mouse while a button is held: left forbids, right allows.
        const ImGuiIO& io = ImGui::GetIO();
        const ui::HeatmapGeometry g = ui::heatmap_geometry(trace, labels, std::min(available.x, available.y), before);
        const bool inside = io.MousePos.x >= g.min.x && io.MousePos.y >= g.min.y &&
                            io.MousePos.x < g.min.x + g.cell * static_cast<float>(trace.weights.cols()) &&
                            io.MousePos.y < g.min.y + g.cell * static_cast<float>(trace.weights.rows()) &&
                            // The map's own button is the active item while a mouse button
                            // is held on it: hovering counts through it, or no drag would.
                            ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem);
        const int j = ui::cell_under(io.MousePos.x, g.min.x, g.cell, static_cast<int>(trace.weights.cols()));
        const int i = ui::cell_under(io.MousePos.y, g.min.y, g.cell, static_cast<int>(trace.weights.rows()));
        if (inside && ImGui::IsMouseDown(ImGuiMouseButton_Left)) set_forbidden(state_, i, j, true);
        if (inside && ImGui::IsMouseDown(ImGuiMouseButton_Right)) set_forbidden(state_, i, j, false);
    } else if (clicked >= 0) {
        state_.query = clicked == state_.query ? -1 : clicked;
    }
}

void AppWindow::draw_tokens_view() {
    const auto& labels = shown_->input.labels;
    const auto T = static_cast<int>(labels.size());
    const auto& heads = shown_->trace.layers[static_cast<std::size_t>(state_.layer)].heads;
    const auto& hidden = state_.hidden_heads[static_cast<std::size_t>(state_.layer)];
    ImGui::Text("Layer %d: lines from each query (left) to the keys it attends (right); opacity = weight",
                state_.layer);
    for (int h = 0; h < static_cast<int>(heads.size()); ++h) {
        if (hidden[static_cast<std::size_t>(h)]) continue;
        ImGui::SameLine();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(head_colours[h % 8]), "head %d", h);
    }
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float column = 180.0f;
    const float gap = std::max(200.0f, ImGui::GetContentRegionAvail().x - 2 * column - 20.0f);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    int hovered = -1;
    for (int i = 0; i < T; ++i) {
        const ImVec2 left(origin.x, origin.y + static_cast<float>(i) * line);
        const ImVec2 right(origin.x + column + gap, left.y);
        ImGui::SetCursorScreenPos(left);
        ImGui::Selectable(labels[static_cast<std::size_t>(i)].c_str(), state_.query == i, 0, ImVec2(column - 10.0f, 0));
        if (ImGui::IsItemHovered()) hovered = i;
        if (ImGui::IsItemClicked()) state_.query = state_.query == i ? -1 : i;
        ImGui::PushID(i + T);
        draw->AddText(right, ImGui::GetColorU32(ImGuiCol_Text), labels[static_cast<std::size_t>(i)].c_str());
        ImGui::PopID();
    }
    // Hovering (or pinning) a query shows only its lines.
    const int focus = hovered >= 0 ? hovered : state_.query;
    for (int h = 0; h < static_cast<int>(heads.size()); ++h) {
        if (hidden[static_cast<std::size_t>(h)]) continue;
        const Matrix& w = heads[static_cast<std::size_t>(h)].weights;
        const ImU32 base = head_colours[h % 8] & 0x00FFFFFFu;
        for (int i = 0; i < T; ++i) {
            if (focus >= 0 && i != focus) continue;
            for (int j = 0; j < T; ++j) {
                const float weight = w(i, j);
                if (weight < 0.02f) continue;   // invisible anyway; keeps long inputs cheap
                const auto alpha = static_cast<ImU32>(std::clamp(weight, 0.0f, 1.0f) * 255.0f);
                draw->AddLine(ImVec2(origin.x + column - 6.0f, origin.y + (static_cast<float>(i) + 0.5f) * line),
                              ImVec2(origin.x + column + gap - 6.0f, origin.y + (static_cast<float>(j) + 0.5f) * line),
                              base | (alpha << IM_COL32_A_SHIFT), 1.5f);
            }
        }
    }
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + static_cast<float>(T) * line));
    ImGui::Dummy(ImVec2(1, 1));
}

void AppWindow::draw_image_view() {
    const ModelInput& input = shown_->input;
    if (!shown_->info.takes_image || shown_->image.width == 0) {
        ImGui::TextWrapped("This view shows attention over an image: choose builtin:tiny-shapes or builtin:toy-vit, "
                           "or drop an image file on the window.");
        return;
    }
    const int grid_w = input.grid_width;
    const int grid_h = input.grid_height;
    const int prefix = input.n_prefix_tokens;
    const int query = state_.query >= 0 ? state_.query : 0;
    const auto& heads = shown_->trace.layers[static_cast<std::size_t>(state_.layer)].heads;
    const auto& hidden = state_.hidden_heads[static_cast<std::size_t>(state_.layer)];

    constexpr const char* modes[] = {"selected head", "average of shown heads"};
    int mode = state_.image_average ? 1 : 0;
    ImGui::SetNextItemWidth(220.0f);
    if (ImGui::Combo("##mode", &mode, modes, 2)) state_.image_average = mode == 1;
    ImGui::SameLine();
    ImGui::Checkbox("what attends to it (column)", &state_.show_column);
    ImGui::SameLine();
    ImGui::Checkbox("keep", &state_.keep_mass);
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("DINO's threshold: outline the fewest patches that hold this share of the map's attention");
    }
    if (state_.keep_mass) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(120.0f);
        float percent = state_.keep_mass_share * 100.0f;
        if (ImGui::SliderFloat("% of the mass", &percent, 1.0f, 99.0f, "%.0f", ImGuiSliderFlags_AlwaysClamp)) {
            state_.keep_mass_share = percent / 100.0f;
        }
    }
    if (!is_toy_model(shown_->model.name)) {
        ImGui::SameLine();
        ImGui::Checkbox("own resolution", &state_.own_resolution);
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Run the picture at its own size (whole patches, at most 1024) with the position "
                              "embeddings interpolated, as DINO draws its maps; off: the model's %d px",
                              shown_->info.image_size);
        }
    }
    ImGui::Text("%s %s  (click a patch to choose it)", state_.show_column ? "attention to" : "attention from",
                input.labels[static_cast<std::size_t>(query)].c_str());
    colour_legend(state_.colormap, "0", "the map's max", false);

    // The patch map: the query's row (or column) over the patches, one cell per patch.
    Matrix map = Matrix::Zero(grid_h, grid_w);
    int counted = 0;
    std::string averaged;   // which heads the map holds: part of its texture's key
    for (int h = 0; h < static_cast<int>(heads.size()); ++h) {
        if (mode == 0 ? h != state_.head : static_cast<bool>(hidden[static_cast<std::size_t>(h)])) continue;
        averaged += numbered(",", h);
        const Matrix& w = heads[static_cast<std::size_t>(h)].weights;
        for (int n = 0; n < grid_w * grid_h; ++n) {
            map(n / grid_w, n % grid_w) += state_.show_column ? w(prefix + n, query) : w(query, prefix + n);
        }
        ++counted;
    }
    if (counted == 0) {
        ImGui::TextDisabled("No head of layer %d is shown: tick \"show\" beside a head (left panel).", state_.layer);
        return;
    }
    map /= static_cast<float>(counted);
    const std::string key = numbered("img", state_.layer, state_.head) + (state_.show_column ? "c" : "r") +
                            std::to_string(query) + "m" + std::to_string(mode) + averaged;
    const float max = std::max(map.maxCoeff(), 1e-12f);
    const ui::HeatmapTexture& heat =
        textures_.get(key, [&] { return ui::heatmap_mip_levels(map, nullptr, state_.colormap, max); });
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const auto [origin, width, height] =
        draw_picture_with_heat(heat, grid_w, grid_h, ImVec2(avail.x - 220.0f, avail.y - 110.0f));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float cw = width / static_cast<float>(grid_w);
    const float ch = height / static_cast<float>(grid_h);
    // Patch lines only while patches are big enough to tell apart.
    if (cw >= 6.0f && ch >= 6.0f) {
        for (int i = 1; i < grid_w; ++i) {
            draw->AddLine(ImVec2(origin.x + cw * i, origin.y), ImVec2(origin.x + cw * i, origin.y + height),
                          IM_COL32(0, 0, 0, 50));
        }
        for (int i = 1; i < grid_h; ++i) {
            draw->AddLine(ImVec2(origin.x, origin.y + ch * i), ImVec2(origin.x + width, origin.y + ch * i),
                          IM_COL32(0, 0, 0, 50));
        }
    }
    if (state_.keep_mass) {
        // The kept region's outline, in the patch grid's cells.
        const Eigen::Map<const RowVector> flat(map.data(), map.size());
        const std::vector<bool> kept = keep_mass(flat, state_.keep_mass_share);
        for (const GridSegment& g : mask_contours(kept, grid_w, grid_h)) {
            draw->AddLine(ImVec2(origin.x + cw * g.x0, origin.y + ch * g.y0),
                          ImVec2(origin.x + cw * g.x1, origin.y + ch * g.y1), IM_COL32(255, 255, 255, 255), 2.5f);
        }
    }
    if (query >= prefix) {
        const int n = query - prefix;
        const ImVec2 a(origin.x + cw * static_cast<float>(n % grid_w), origin.y + ch * static_cast<float>(n / grid_w));
        draw->AddRect(a, ImVec2(a.x + cw, a.y + ch), IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.0f);
    }
    if (ImGui::InvisibleButton("patches", ImVec2(width, height))) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int gx = ui::cell_under(m.x, origin.x, cw, grid_w);
        const int gy = ui::cell_under(m.y, origin.y, ch, grid_h);
        state_.query = prefix + gy * grid_w + gx;
    }
    ImGui::SameLine();
    ImGui::BeginGroup();
    if (ImGui::Button("[CLS]")) state_.query = 0;
    ImGui::TextUnformatted("[CLS] of every head:");
    for (int h = 0; h < static_cast<int>(heads.size()); ++h) {
        Matrix cls(grid_h, grid_w);
        for (int n = 0; n < grid_w * grid_h; ++n)
            cls(n / grid_w, n % grid_w) = heads[static_cast<std::size_t>(h)].weights(0, prefix + n);
        const float cls_max = std::max(cls.maxCoeff(), 1e-12f);
        const ui::HeatmapTexture& t = textures_.get(numbered("cls", state_.layer, h), [&] {
            return ui::heatmap_mip_levels(cls, nullptr, state_.colormap, cls_max);
        });
        if (h % 2) ImGui::SameLine();
        if (ui::draw_heatmap_thumbnail(numbered("clsh", h).c_str(), t, 96.0f, h == state_.head)) state_.head = h;
        if (state_.keep_mass) {
            // Each head's own kept region, as DINO draws one mask per head.
            const ImVec2 at = ImGui::GetItemRectMin();
            const float tw = 96.0f / static_cast<float>(grid_w);
            const float th = 96.0f / static_cast<float>(grid_h);
            const Eigen::Map<const RowVector> flat(cls.data(), cls.size());
            for (const GridSegment& g : mask_contours(keep_mass(flat, state_.keep_mass_share), grid_w, grid_h)) {
                draw->AddLine(ImVec2(at.x + tw * g.x0, at.y + th * g.y0), ImVec2(at.x + tw * g.x1, at.y + th * g.y1),
                              IM_COL32(255, 255, 255, 255), 1.5f);
            }
        }
    }
    ImGui::EndGroup();
}

void AppWindow::draw_stages_view() {
    const AttentionTrace& layer = shown_->trace.layers[static_cast<std::size_t>(state_.layer)];
    const HeadTrace& head = layer.heads[static_cast<std::size_t>(state_.head)];
    ImGui::Text("Head %d.%d, step by step", state_.layer, state_.head);
    if (detail_of(layer) != TraceDetail::all_stages) {
        // A run keeps the stages of the layer this view shows only (a third of the
        // memory otherwise); the request for this layer's is on its way.
        ImGui::TextDisabled("Computing layer %d's stages...", state_.layer);
        return;
    }
    colour_legend(Colormap::coolwarm, "-max |value|", "+max |value|", false);
    ImGui::SameLine();
    colour_legend(state_.colormap, "softmax 0", "1");
    const auto shape = [](const Matrix& m) {
        char text[48];
        std::snprintf(text, sizeof text, "[%ld, %ld]", static_cast<long>(m.rows()), static_cast<long>(m.cols()));
        return std::string(text);
    };
    struct Stage {
        const char* name;
        const Matrix* values;
        bool weights;
    };
    const Stage stages[] = {
        {"X = LN(x), the layer's input", &layer.input, false},
        {"Q = X Wq^T + bq", &head.q, false},
        {"K", &head.k, false},
        {"V", &head.v, false},
        {"Q K^T / sqrt(Dh)", &head.scores, false},
        {"+ mask", &head.masked, false},
        {"softmax", &head.weights, true},
        {"x V (context)", &head.context, false},
        {"heads concatenated", &layer.concat, false},
        {"output projection", &layer.output, false},
    };
    const float side = 150.0f;
    int column = 0;
    const int per_row = std::max(1, static_cast<int>(ImGui::GetContentRegionAvail().x / (side + 16.0f)));
    for (const Stage& s : stages) {
        if (s.values->size() == 0) continue;
        if (column++ % per_row) ImGui::SameLine();
        ImGui::BeginGroup();
        ImGui::Text("%s", s.name);
        ImGui::TextDisabled("%s", shape(*s.values).c_str());
        const std::string key = numbered("stage", state_.layer, state_.head) + s.name;
        const ui::HeatmapTexture& t = s.weights
                                          ? weights_texture(key, *s.values)
                                          : signed_texture(key, *s.values, s.values == &head.masked ? mask() : nullptr);
        const float aspect =
            static_cast<float>(s.values->cols()) / static_cast<float>(std::max<Eigen::Index>(1, s.values->rows()));
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        // No thinner than a third of the square: a short input's [21, 768] is a readable
        // band (rows stretched), not a strip of 4 pixels.
        const ImVec2 extent = aspect >= 1.0f ? ImVec2(side, std::max(side / aspect, side / 3.0f))
                                             : ImVec2(std::max(side * aspect, side / 3.0f), side);
        ImGui::GetWindowDrawList()->AddImage(t.id(), origin, ImVec2(origin.x + extent.x, origin.y + extent.y));
        ImGui::Dummy(ImVec2(side, side));
        ImGui::EndGroup();
    }
}

}   // namespace headscope::gui
