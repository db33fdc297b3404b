#include "ui/widgets/heatmap_view.h"

#include "ui/widgets/cell_under.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace headscope::ui {

namespace {

// Dear ImGui 1.86 draws text horizontally only; key labels along the top are rotated
// by turning the vertices of the just-added text (the recipe of ImGui issue #1286).
void add_text_rotated(ImDrawList* draw, ImVec2 anchor, ImU32 colour, const char* text, float angle) {
    const int first = draw->VtxBuffer.Size;
    draw->AddText(anchor, colour, text);
    const float c = std::cos(angle);
    const float s = std::sin(angle);
    for (int i = first; i < draw->VtxBuffer.Size; ++i) {
        ImVec2& p = draw->VtxBuffer[i].pos;
        const float dx = p.x - anchor.x;
        const float dy = p.y - anchor.y;
        p = ImVec2(anchor.x + dx * c - dy * s, anchor.y + dx * s + dy * c);
    }
}

float widest(const std::vector<std::string>& labels) {
    float width = 0.0f;
    for (const auto& label : labels) width = std::max(width, ImGui::CalcTextSize(label.c_str()).x);
    return width;
}

}   // namespace

HeatmapGeometry heatmap_geometry(const Matrix& weights, const HeatmapLabels& labels, float max_side, ImVec2 origin) {
    const float line = ImGui::GetTextLineHeight();
    const float left = std::min(widest(labels.queries), 160.0f) + 8.0f;
    const float top = std::min(widest(labels.keys), 160.0f) * 0.75f + line + 4.0f;
    const auto Tq = static_cast<float>(weights.rows());
    const auto Tk = static_cast<float>(weights.cols());
    // Whole pixels per cell while cells are big; below that, fractions, so long inputs fit.
    const float fit = std::min((max_side - left) / Tk, (max_side - top) / Tq);
    const float cell = fit >= 4.0f ? std::floor(fit) : std::max(fit, 0.5f);
    return {ImVec2(origin.x + left, origin.y + top), cell};
}

int draw_heatmap(const char* id, const Matrix& weights, const Matrix* scores, const Mask* allowed,
                 const HeatmapTexture& texture, const HeatmapLabels& labels, float max_side, int pinned_row) {
    ImGui::PushID(id);
    const auto Tq = static_cast<int>(weights.rows());
    const auto Tk = static_cast<int>(weights.cols());
    const float line = ImGui::GetTextLineHeight();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const HeatmapGeometry geometry = heatmap_geometry(weights, labels, max_side, origin);
    const float cell = geometry.cell;
    const ImVec2 map_min = geometry.min;
    const ImVec2 map_max(map_min.x + cell * static_cast<float>(Tk), map_min.y + cell * static_cast<float>(Tq));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 text_colour = ImGui::GetColorU32(ImGuiCol_Text);

    draw->AddImage(texture.id(), map_min, map_max);
    // Label every row and column while they are legible; thin them out otherwise.
    const int step = std::max(1, static_cast<int>(std::ceil(line / cell)));
    for (int i = 0; i < Tq && i < static_cast<int>(labels.queries.size()); i += step) {
        const char* text = labels.queries[static_cast<std::size_t>(i)].c_str();
        const float width = ImGui::CalcTextSize(text).x;
        draw->AddText(ImVec2(map_min.x - width - 4.0f, map_min.y + cell * (static_cast<float>(i) + 0.5f) - line * 0.5f),
                      text_colour, text);
    }
    for (int j = 0; j < Tk && j < static_cast<int>(labels.keys.size()); j += step) {
        const ImVec2 anchor(map_min.x + cell * (static_cast<float>(j) + 0.5f) - line * 0.35f, map_min.y - 4.0f);
        add_text_rotated(draw, anchor, text_colour, labels.keys[static_cast<std::size_t>(j)].c_str(), -0.785398f);
    }

    if (pinned_row >= 0 && pinned_row < Tq) {
        const float y = map_min.y + cell * static_cast<float>(pinned_row);
        draw->AddRect(ImVec2(map_min.x - 2, y - 1), ImVec2(map_max.x + 2, y + cell + 1), IM_COL32(255, 255, 255, 255),
                      0.0f, 0, 2.0f);
    }
    ImGui::SetCursorScreenPos(map_min);
    int clicked_row = -1;
    if (ImGui::InvisibleButton("cells", ImVec2(map_max.x - map_min.x, map_max.y - map_min.y))) {
        clicked_row = cell_under(ImGui::GetIO().MousePos.y, map_min.y, cell, Tq);
    }
    if (ImGui::IsItemHovered()) {
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        const int j = cell_under(mouse.x, map_min.x, cell, Tk);
        const int i = cell_under(mouse.y, map_min.y, cell, Tq);
        const ImVec2 a(map_min.x + cell * static_cast<float>(j), map_min.y + cell * static_cast<float>(i));
        draw->AddRect(a, ImVec2(a.x + cell, a.y + cell), IM_COL32(255, 255, 255, 255));
        const bool masked = allowed && !(*allowed)(i, j);
        ImGui::BeginTooltip();
        ImGui::Text("query %d  %s", i,
                    i < static_cast<int>(labels.queries.size()) ? labels.queries[static_cast<std::size_t>(i)].c_str()
                                                                : "");
        ImGui::Text("key   %d  %s", j,
                    j < static_cast<int>(labels.keys.size()) ? labels.keys[static_cast<std::size_t>(j)].c_str() : "");
        if (masked) {
            ImGui::TextUnformatted("masked (not allowed): weight 0");
        } else {
            ImGui::Text("weight %.4f", static_cast<double>(weights(i, j)));
        }
        if (scores != nullptr) ImGui::Text("score  %.4f  (q.k / sqrt(Dh))", static_cast<double>((*scores)(i, j)));
        ImGui::EndTooltip();
    }
    ImGui::SetCursorScreenPos(ImVec2(origin.x, map_max.y + 4.0f));
    ImGui::Dummy(ImVec2(map_max.x - origin.x, 0.0f));
    ImGui::PopID();
    return clicked_row;
}

bool draw_heatmap_thumbnail(const char* id, const HeatmapTexture& texture, float side, bool selected) {
    ImGui::PushID(id);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const bool clicked = ImGui::InvisibleButton("thumb", ImVec2(side, side));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddImage(texture.id(), origin, ImVec2(origin.x + side, origin.y + side));
    const ImU32 frame =
        selected ? ImGui::GetColorU32(ImGuiCol_PlotHistogram)
                 : (ImGui::IsItemHovered() ? ImGui::GetColorU32(ImGuiCol_Text) : ImGui::GetColorU32(ImGuiCol_Border));
    // The frame lies wholly outside the map: ImGui strokes a rect's edge centred half a
    // pixel inside its corners, so it is moved out by half its width and that half pixel;
    // the selection's, a pixel further, so that a dark gap parts it from a bright edge.
    // (Drawn over the map, a 3-pixel frame hid its first row and column: a [CLS] or
    // first-token column, where many heads put most of their weight.)
    const float thickness = selected ? 2.0f : 1.0f;
    const float out = thickness / 2.0f + 0.5f + (selected ? 1.0f : 0.0f);
    draw->AddRect(ImVec2(origin.x - out, origin.y - out), ImVec2(origin.x + side + out, origin.y + side + out), frame,
                  0.0f, 0, thickness);
    ImGui::PopID();
    return clicked;
}

}   // namespace headscope::ui
