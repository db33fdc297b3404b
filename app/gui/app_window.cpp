#include "app/gui/app_window.h"

#include "core/error.h"
#include "core/heatmap_image.h"
#include "core/model_registry.h"
#include "ui/heatmap_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <string>

namespace headscope::gui {

namespace {

constexpr float controls_width = 340.0f;

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

bool AppWindow::ModelKey::operator==(const ModelKey& o) const {
    const ToyConfig& a = config;
    const ToyConfig& b = o.config;
    return model == o.model && a.width == b.width && a.n_heads == b.n_heads && a.n_layers == b.n_layers &&
           a.mlp_ratio == b.mlp_ratio && a.max_tokens == b.max_tokens && a.image_size == b.image_size &&
           a.patch_size == b.patch_size && a.bias == b.bias && a.seed == b.seed && a.init == b.init;
}

AppWindow::AppWindow(AppState initial) : state_(std::move(initial)) {}

AppWindow::RunKey AppWindow::run_key() const {
    return {{state_.model, state_.config}, state_.text, state_.image_path, state_.causal, state_.disabled_heads};
}

void AppWindow::update() {
    const ModelKey wanted{state_.model, state_.config};
    if (model_key_ != wanted) {
        model_key_ = wanted;
        try {
            model_ = open_model(state_.model, state_.config);
            const ModelInfo& info = model_->info();
            state_.disabled_heads.assign(static_cast<std::size_t>(info.n_layers),
                                         std::vector<bool>(static_cast<std::size_t>(info.n_heads), false));
            state_.layer = std::clamp(state_.layer, 0, static_cast<int>(info.n_layers) - 1);
            state_.selected_head = std::clamp(state_.selected_head, 0, static_cast<int>(info.n_heads) - 1);
        } catch (const Error& e) {
            error_ = e.what();   // keep the previous model and result
        }
    }
    if (!model_) return;
    RunKey key = run_key();
    if (computed_ != key) {
        computed_ = key;
        try {
            Result result;
            result.input = model_->info().takes_image ? model_->encode_image(decode_image_file(state_.image_path))
                                                      : model_->encode_text(state_.text);
            RunOptions options;
            options.causal = state_.causal;
            options.disabled_heads = state_.disabled_heads;
            options.detail = TraceDetail::all_stages;
            result.trace = model_->forward(result.input, options);
            result_ = std::move(result);
            error_.clear();
            uploaded_layer_ = -1;
        } catch (const Error& e) {
            error_ = e.what();   // the previous result stays on screen
        }
    }
    if (result_ && (uploaded_layer_ != state_.layer || uploaded_colormap_ != state_.colormap)) upload_textures();
}

void AppWindow::upload_textures() {
    const int layer = std::clamp(state_.layer, 0, static_cast<int>(result_->trace.layers.size()) - 1);
    const auto& heads = result_->trace.layers[static_cast<std::size_t>(layer)].heads;
    textures_.resize(heads.size());
    const Mask* allowed = result_->trace.mask ? &*result_->trace.mask : nullptr;
    for (std::size_t h = 0; h < heads.size(); ++h) {
        textures_[h].upload(heatmap_image(heads[h].weights, allowed, state_.colormap));
    }
    uploaded_layer_ = state_.layer;
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
    ImGui::Separator();

    if (ImGui::BeginCombo("Model", state_.model.c_str())) {
        for (const BuiltinModel& m : builtin_models()) {
            if (ImGui::Selectable(m.name.c_str(), m.name == state_.model)) state_.model = m.name;
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", m.description.c_str());
        }
        ImGui::EndCombo();
    }
    bool structured = state_.config.init == ToyInit::structured;
    if (ImGui::Checkbox("Structured heads", &structured)) {
        state_.config.init = structured ? ToyInit::structured : ToyInit::random;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Off: random weights, as the tutorials initialise");
    int seed = static_cast<int>(state_.config.seed);
    if (ImGui::InputInt("Seed", &seed)) state_.config.seed = static_cast<std::uint64_t>(std::max(seed, 0));

    ImGui::Separator();
    const bool image_model = model_ && model_->info().takes_image;
    if (image_model) {
        ImGui::TextUnformatted("Image file");
        ImGui::InputText("##image", &state_.image_path);
    } else {
        ImGui::TextUnformatted("Sentence");
        ImGui::InputTextMultiline("##sentence", &state_.text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 5));
    }
    ImGui::Checkbox("Causal mask", &state_.causal);

    constexpr Colormap maps[] = {Colormap::viridis, Colormap::magma, Colormap::cividis, Colormap::greys};
    if (ImGui::BeginCombo("Colours", std::string(colormap_name(state_.colormap)).c_str())) {
        for (Colormap map : maps) {
            if (ImGui::Selectable(std::string(colormap_name(map)).c_str(), map == state_.colormap)) state_.colormap = map;
        }
        ImGui::EndCombo();
    }
    if (!model_) return;

    const ModelInfo& info = model_->info();
    ImGui::Separator();
    ImGui::SliderInt("Layer", &state_.layer, 0, static_cast<int>(info.n_layers) - 1);
    ImGui::TextUnformatted("Heads (select / disable = ablate)");
    auto& disabled = state_.disabled_heads[static_cast<std::size_t>(state_.layer)];
    for (int h = 0; h < static_cast<int>(info.n_heads); ++h) {
        ImGui::PushID(h);
        std::string label = "head ";
        label += std::to_string(h);
        if (ImGui::RadioButton(label.c_str(), state_.selected_head == h)) state_.selected_head = h;
        ImGui::SameLine(120.0f);
        bool off = disabled[static_cast<std::size_t>(h)];
        if (ImGui::Checkbox("disabled", &off)) disabled[static_cast<std::size_t>(h)] = off;
        ImGui::PopID();
    }
    ImGui::Separator();
    ImGui::TextWrapped("%s", info.description.c_str());
    ImGui::Text("T = %zu, E = %ld, H = %ld, L = %ld", result_ ? result_->input.labels.size() : std::size_t{0},
                static_cast<long>(info.width), static_cast<long>(info.n_heads), static_cast<long>(info.n_layers));
}

void AppWindow::draw_views() {
    if (!error_.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 110, 255));
        ImGui::TextWrapped("%s", error_.c_str());
        ImGui::PopStyleColor();
        if (result_) ImGui::TextDisabled("(showing the last result that worked)");
        ImGui::Separator();
    }
    if (!result_ || textures_.empty()) return;

    const auto n_heads = static_cast<int>(textures_.size());
    const int layer = std::clamp(uploaded_layer_, 0, static_cast<int>(result_->trace.layers.size()) - 1);
    ImGui::Text("Layer %d: every head (click to select)", layer);
    for (int h = 0; h < n_heads; ++h) {
        if (h) ImGui::SameLine();
        std::string id = "head";
        id += std::to_string(h);
        if (ui::draw_heatmap_thumbnail(id.c_str(), textures_[static_cast<std::size_t>(h)], 72.0f,
                                       h == state_.selected_head)) {
            state_.selected_head = h;
        }
    }
    ImGui::Spacing();
    const int head = std::clamp(state_.selected_head, 0, n_heads - 1);
    const ModelInfo& info = model_->info();
    const std::string& role = info.head_roles.empty() ? std::string() :
        info.head_roles[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)];
    ImGui::Text("Head %d.%d%s", layer, head,
                state_.disabled_heads[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)]
                    ? " (disabled: zero context)" : "");
    if (!role.empty()) ImGui::TextWrapped("built to: %s", role.c_str());
    draw_colour_legend(state_.colormap);
    ImGui::Spacing();

    ui::HeatmapLabels labels{result_->input.labels, result_->input.labels};
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const Mask* allowed = result_->trace.mask ? &*result_->trace.mask : nullptr;
    ui::draw_heatmap("selected", result_->trace.layers[static_cast<std::size_t>(layer)].heads[static_cast<std::size_t>(head)],
                     allowed, textures_[static_cast<std::size_t>(head)], labels, std::min(available.x, available.y));
}

} // namespace headscope::gui
