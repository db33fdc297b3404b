#pragma once
// The window's content: what the user chose (AppState), the last good result, and
// the ImGui code that draws both. The main loop owns one of each.

#include "app/gui/preview_layer.h"
#include "core/colormap.h"
#include "ui/heatmap_texture.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::gui {

struct AppState {
    PreviewRequest request;
    int selected_head = 0;
    Colormap colormap = Colormap::viridis;
    std::uint32_t seed = 0;
};

class AppWindow {
public:
    AppWindow(AppState initial);

    // Recomputes when the request or seed changed since the last frame; a failure
    // keeps the previous result on screen and shows the error in a banner.
    void update();
    void draw();

    const std::string& error() const { return error_; }
    bool has_result() const { return result_.has_value(); }

private:
    void draw_controls();
    void draw_views();
    void upload_textures();

    AppState state_;
    std::unique_ptr<PreviewLayer> layer_;
    std::uint32_t layer_seed_ = 0;
    std::optional<PreviewRequest> computed_request_;
    Colormap uploaded_colormap_ = Colormap::viridis;
    std::optional<PreviewResult> result_;
    std::vector<ui::HeatmapTexture> textures_;   // [H]
    std::string error_;
};

} // namespace headscope::gui
