// The Stages view: one head step by step: Q, K, V, scores, mask, softmax, context.

#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/cell_under.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace headscope::ui {

using namespace session;

class StagesView final : public View {
public:
    std::string_view name() const override { return "stages"; }
    const char* title() const override { return "Stages"; }
    std::string_view summary() const override {
        return "one head step by step: Q, K, V, scores, mask, softmax, context";
    }
    session::ViewNeeds needs(const session::AppState& /*state*/) const override { return {.stages_of_layer = true}; }
    void draw(ViewContext& context) override;
};

void StagesView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const AttentionTrace& layer = shown.trace.layers[static_cast<std::size_t>(state.layer)];
    const HeadTrace& head = layer.heads[static_cast<std::size_t>(state.head)];
    ImGui::Text("Head %d.%d, step by step", state.layer, state.head);
    if (detail_of(layer) != TraceDetail::all_stages) {
        // A run keeps the stages of the layer this view shows only (a third of the
        // memory otherwise); the request for this layer's is on its way.
        ImGui::TextDisabled("Computing layer %d's stages...", state.layer);
        return;
    }
    colour_legend(Colormap::coolwarm, "-max |value|", "+max |value|", false);
    ImGui::SameLine();
    colour_legend(state.colormap, "softmax 0", "1");
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
        const std::string key = numbered("stage", state.layer, state.head) + s.name;
        const HeatmapTexture& t =
            s.weights ? context.weights_texture(key, *s.values)
                      : context.signed_texture(key, *s.values, s.values == &head.masked ? context.mask() : nullptr);
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

std::unique_ptr<View> make_stages_view() { return std::make_unique<StagesView>(); }

}   // namespace headscope::ui
