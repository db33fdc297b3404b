#pragma once
// The window's content: what the user chose (AppState), the model and the last good
// result, and the ImGui code that draws them. The main loop owns one AppWindow.

#include "core/colormap.h"
#include "core/model.h"
#include "core/toy_models.h"
#include "ui/heatmap_texture.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace headscope::gui {

// What the user chose. Everything the result depends on is compared each frame, and
// only a change recomputes.
struct AppState {
    std::string model = "builtin:toy-text";
    ToyConfig config;
    std::string text;
    std::string image_path;
    bool causal = false;
    std::vector<std::vector<bool>> disabled_heads;   // [L][H]
    int layer = 0;
    int selected_head = 0;
    Colormap colormap = Colormap::viridis;
};

class AppWindow {
public:
    explicit AppWindow(AppState initial);

    // Recomputes what changed; a failure keeps the previous result on screen and shows
    // the error in a banner.
    void update();
    void draw();

    const std::string& error() const { return error_; }

private:
    struct Result {
        ModelInput input;
        ModelTrace trace;
    };
    // The parts of AppState each stage depends on.
    struct ModelKey {
        std::string model;
        ToyConfig config;
        bool operator==(const ModelKey& o) const;
    };
    struct RunKey {
        ModelKey model;
        std::string text;
        std::string image_path;
        bool causal;
        std::vector<std::vector<bool>> disabled_heads;
        bool operator==(const RunKey& o) const = default;
    };

    void draw_controls();
    void draw_views();
    void upload_textures();
    RunKey run_key() const;

    AppState state_;
    std::unique_ptr<Model> model_;
    std::optional<ModelKey> model_key_;
    std::optional<RunKey> computed_;
    std::optional<Result> result_;
    int uploaded_layer_ = -1;
    Colormap uploaded_colormap_ = Colormap::viridis;
    std::vector<ui::HeatmapTexture> textures_;   // [H] of the shown layer
    std::string error_;
};

} // namespace headscope::gui
