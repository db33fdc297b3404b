#pragma once
// The window's content: the user's choices (AppState), the worker computing them, the
// snapshot on screen, and the ImGui code that draws the controls and the six views.

#include "app/gui/app_state.h"
#include "app/gui/worker.h"
#include "ui/file_picker.h"
#include "ui/texture_pool.h"

#include <cstdint>
#include <memory>
#include <string>

namespace headscope::gui {

class AppWindow {
public:
    explicit AppWindow(AppState initial);

    // Once per frame: submits what changed, swaps in a finished result.
    void update();
    void draw();

    // A file dropped on the window.
    void on_drop(const std::string& path);

    // True once the newest request has been answered and its result (or error) is shown.
    bool settled() const;
    const std::string& error() const { return error_; }

private:
    void draw_controls();
    void draw_status_bar();
    void draw_matrix_view();
    void draw_tokens_view();
    void draw_image_view();
    void draw_model_view();
    void draw_compare_view();
    void draw_stages_view();
    void handle_keys();

    // The texture of weights (any [R, C] map) drawn with the current colour map and scale.
    const ui::HeatmapTexture& weights_texture(const std::string& key, const Matrix& weights);
    const ui::HeatmapTexture& signed_texture(const std::string& key, const Matrix& values, const Mask* allowed);
    const Mask* mask() const;

    AppState state_;
    Worker worker_;
    std::uint64_t submitted_ = 0;
    Request last_request_;
    bool has_request_ = false;
    std::shared_ptr<const Snapshot> shown_;
    Colormap textures_colormap_ = Colormap::viridis;
    HeatScale textures_scale_ = HeatScale::shared;
    ui::TexturePool textures_;
    ui::FilePicker file_picker_;
    std::string image_edit_;          // the image path field while typing
    std::string image_edit_source_;   // the applied path image_edit_ was last reset from
    std::string error_;
    std::uint64_t error_generation_ = 0;
};

} // namespace headscope::gui
