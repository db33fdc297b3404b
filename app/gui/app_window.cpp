#include "app/gui/app_window.h"

#include "core/error.h"
#include "core/heatmap_image.h"
#include "ui/heatmap_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <string>

namespace headscope::gui {

namespace {

constexpr float controls_width = 330.0f;

void draw_colour_legend(Colormap map) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = 200.0f;
    const float height = ImGui::GetTextLineHeight();
    constexpr int steps = 64;
    for (int i = 0; i < steps; ++i) {
        const Rgba8 c = colormap_lookup(map, static_cast<float>(i) / (steps - 1));
        const float x0 = origin.x + width * static_cast<float>(i) / steps;
        draw->AddRectFilled(ImVec2(x0, origin.y), ImVec2(x0 + width / steps + 1.0f, origin.y + height),
                            IM_COL32(c.r, c.g, c.b, 255));
    }
    ImGui::Dummy(ImVec2(width, height));
    ImGui::SameLine();
    ImGui::TextUnformatted("0 .. 1");
    ImGui::SameLine();
    const ImVec2 swatch = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(swatch, ImVec2(swatch.x + height, swatch.y + height),
                        IM_COL32(masked_colour.r, masked_colour.g, masked_colour.b, 255));
    ImGui::Dummy(ImVec2(height, height));
    ImGui::SameLine();
    ImGui::TextUnformatted("masked");
}

} // namespace

AppWindow::AppWindow(AppState initial) : state_(std::move(initial)) {
    state_.request.disabled_heads.resize(PreviewLayer::n_heads, false);
    state_.selected_head = std::clamp(state_.selected_head, 0, static_cast<int>(PreviewLayer::n_heads) - 1);
}

void AppWindow::update() {
    if (!layer_ || layer_seed_ != state_.seed) {
        layer_ = std::make_unique<PreviewLayer>(state_.seed);
        layer_seed_ = state_.seed;
        computed_request_.reset();
    }
    if (computed_request_ != state_.request) {
        computed_request_ = state_.request;
        try {
            result_ = layer_->run(state_.request);
            error_.clear();
            upload_textures();
        } catch (const Error& e) {
            error_ = e.what();   // the previous result stays on screen
        }
    }
    if (result_ && uploaded_colormap_ != state_.colormap) upload_textures();
}

void AppWindow::upload_textures() {
    const auto& heads = result_->trace.heads;
    textures_.resize(heads.size());
    const Mask* allowed = result_->mask ? &*result_->mask : nullptr;
    for (std::size_t h = 0; h < heads.size(); ++h) {
        textures_[h].upload(heatmap_image(heads[h].weights, allowed, state_.colormap));
    }
    uploaded_colormap_ = state_.colormap;
}

void AppWindow::draw() {
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    ImGui::Begin("Headscope", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    ImGui::BeginChild("controls", ImVec2(controls_width, 0.0f), true);
    draw_controls();
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("views", ImVec2(0.0f, 0.0f), true);
    draw_views();
    ImGui::EndChild();
    ImGui::End();
}

void AppWindow::draw_controls() {
    ImGui::TextUnformatted("Headscope");
    ImGui::TextDisabled("one attention layer, seeded random weights");
    ImGui::Separator();

    ImGui::TextUnformatted("Sentence");
    ImGui::InputTextMultiline("##sentence", &state_.request.text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 5));

    ImGui::Checkbox("Causal mask", &state_.request.causal);
    int seed = static_cast<int>(state_.seed);
    if (ImGui::InputInt("Seed", &seed)) state_.seed = static_cast<std::uint32_t>(std::max(seed, 0));

    const char* maps[] = {"viridis", "magma", "greys"};
    int map = static_cast<int>(state_.colormap);
    if (ImGui::Combo("Colours", &map, maps, IM_ARRAYSIZE(maps))) state_.colormap = static_cast<Colormap>(map);

    ImGui::Separator();
    ImGui::TextUnformatted("Heads (select / disable = ablate)");
    for (int h = 0; h < static_cast<int>(PreviewLayer::n_heads); ++h) {
        ImGui::PushID(h);
        const std::string label = "head " + std::to_string(h);
        if (ImGui::RadioButton(label.c_str(), state_.selected_head == h)) state_.selected_head = h;
        ImGui::SameLine(120.0f);
        bool disabled = state_.request.disabled_heads[static_cast<std::size_t>(h)];
        if (ImGui::Checkbox("disabled", &disabled)) state_.request.disabled_heads[static_cast<std::size_t>(h)] = disabled;
        ImGui::PopID();
    }

    if (result_) {
        ImGui::Separator();
        const auto& trace = result_->trace;
        ImGui::Text("T = %zu tokens, E = %ld, H = %ld, Dh = %ld", result_->tokens.size(),
                    static_cast<long>(PreviewLayer::model_width), static_cast<long>(PreviewLayer::n_heads),
                    static_cast<long>(PreviewLayer::model_width / PreviewLayer::n_heads));
        ImGui::Text("output [%ld, %ld], |output| max %.3f", static_cast<long>(trace.output.rows()),
                    static_cast<long>(trace.output.cols()), static_cast<double>(trace.output.cwiseAbs().maxCoeff()));
    }
}

void AppWindow::draw_views() {
    if (!error_.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
        ImGui::TextWrapped("%s", error_.c_str());
        ImGui::PopStyleColor();
        if (result_) ImGui::TextDisabled("(showing the last result that worked)");
        ImGui::Separator();
    }
    if (!result_) return;

    const auto n_heads = static_cast<int>(result_->trace.heads.size());
    ImGui::TextUnformatted("All heads (click to select)");
    for (int h = 0; h < n_heads; ++h) {
        if (h) ImGui::SameLine();
        const std::string id = "head" + std::to_string(h);
        if (ui::draw_heatmap_thumbnail(id.c_str(), textures_[static_cast<std::size_t>(h)], 72.0f,
                                       h == state_.selected_head)) {
            state_.selected_head = h;
        }
    }
    ImGui::Spacing();
    const int head = std::clamp(state_.selected_head, 0, n_heads - 1);
    ImGui::Text("Head %d%s: attention weights, queries (rows) x keys (columns)", head,
                state_.request.disabled_heads[static_cast<std::size_t>(head)] ? " (disabled: zero context)" : "");
    draw_colour_legend(state_.colormap);
    ImGui::Spacing();

    ui::HeatmapLabels labels{result_->tokens, result_->tokens};
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const Mask* allowed = result_->mask ? &*result_->mask : nullptr;
    ui::draw_heatmap("selected", result_->trace.heads[static_cast<std::size_t>(head)], allowed,
                     textures_[static_cast<std::size_t>(head)], labels, std::min(available.x, available.y));
}

} // namespace headscope::gui
