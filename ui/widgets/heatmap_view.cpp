#include "ui/widgets/heatmap_view.h"

#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/ui_scale.h"

#include "ui/widgets/cell_under.h"

#include <imgui_internal.h>   // SetItemUsingMouseWheel: the wheel over a map zooms it

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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

int HeatmapGeometry::row_under(float y, int rows) const { return cell_under(y, min.y - first_row * cell, cell, rows); }

int HeatmapGeometry::col_under(float x, int cols) const { return cell_under(x, min.x - first_col * cell, cell, cols); }

namespace {

// Pixels a cell has at zoom 1, when the whole map fits `room` beside its labels.
float fit_cell(const Matrix& weights, float left, float top, ImVec2 room) {
    const auto Tq = static_cast<float>(weights.rows());
    const auto Tk = static_cast<float>(weights.cols());
    // Whole pixels per cell while cells are big; below that, fractions, so long inputs fit.
    const float fit = std::min((room.x - left) / Tk, (room.y - top) / Tq);
    return fit >= 4.0f ? std::floor(fit) : std::max(fit, 1.0f / 64.0f);
}

float label_band_left(const HeatmapLabels& labels) { return std::min(widest(labels.queries), px(160.0f)) + px(8.0f); }
float label_band_top(const HeatmapLabels& labels) {
    return std::min(widest(labels.keys), px(160.0f)) * 0.75f + ImGui::GetTextLineHeight() + px(4.0f);
}

// The labels of the rows and columns in sight, every one while they are legible and
// thinned out otherwise; the hovered row and column (or -1) marked on the axes.
void draw_axis_labels(const HeatmapGeometry& g, ImVec2 origin, const HeatmapLabels& labels, int rows, int cols,
                      int hover_row, int hover_col) {
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const float line = ImGui::GetTextLineHeight();
    const ImU32 text_colour = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 mark = ImGui::GetColorU32(ImGuiCol_PlotHistogram);
    const int step = std::max(1, static_cast<int>(std::ceil(line / g.cell)));
    // Labels turned 45 degrees need a line's height times sqrt(2) across each.
    const int key_step = std::max(1, static_cast<int>(std::ceil(line * 1.42f / g.cell)));
    const int row_from = static_cast<int>(g.first_row);
    const int row_to = std::min(rows, static_cast<int>(std::ceil(g.first_row + g.size.y / g.cell)));
    const int col_from = static_cast<int>(g.first_col);
    const int col_to = std::min(cols, static_cast<int>(std::ceil(g.first_col + g.size.x / g.cell)));
    // Row labels stay beside the map, never above its top edge (where the column labels are)
    // or below its bottom, nor on one another: each starts below the last, and one that would have to move more
    // than half a line from its row is left out. The hovered row's is always drawn.
    float free_from = g.min.y;
    const auto query = [&](int i, bool hovered) {
        const std::string text = visible_token(labels.queries[static_cast<std::size_t>(i)]);
        const float width = ImGui::CalcTextSize(text.c_str()).x;
        const float centre = g.at(static_cast<float>(i) + 0.5f, 0.0f).y;
        if (centre < g.min.y || centre > g.max().y) return;   // a row cut at an edge
        // Nor below its bottom edge, where the view may end.
        const float y = std::min(std::max(centre - line * 0.5f, hovered ? g.min.y : free_from), g.max().y - line);
        if (!hovered && (y > centre || y < free_from)) return;
        const ImVec2 at(g.min.x - width - 4.0f, y);
        if (hovered) draw->AddRectFilled(ImVec2(at.x - 2.0f, at.y), ImVec2(g.min.x - 1.0f, at.y + line), mark);
        draw->AddText(at, text_colour, text.c_str());
        if (!hovered) free_from = y + line;
    };
    const auto key = [&](int j) {
        const float x = g.at(0.0f, static_cast<float>(j) + 0.5f).x;
        if (x < g.min.x || x > g.max().x) return;   // a column cut at an edge
        if (j == hover_col) {
            draw->AddRectFilled(ImVec2(x - std::max(g.cell, 3.0f) * 0.5f, g.min.y - 4.0f),
                                ImVec2(x + std::max(g.cell, 3.0f) * 0.5f, g.min.y - 1.0f), mark);
        }
        add_text_rotated(draw, ImVec2(x - line * 0.35f, g.min.y - 4.0f), text_colour,
                         visible_token(labels.keys[static_cast<std::size_t>(j)]).c_str(), -0.785398f);
    };
    const int n_queries = std::min(rows, static_cast<int>(labels.queries.size()));
    const int n_keys = std::min(cols, static_cast<int>(labels.keys.size()));
    draw->PushClipRect(ImVec2(origin.x, g.min.y - line), ImVec2(g.min.x, g.max().y + line), true);
    for (int i = row_from - row_from % step; i < std::min(row_to, n_queries); i += step) {
        if (i >= row_from && i != hover_row) query(i, false);
    }
    if (hover_row >= 0 && hover_row < n_queries) query(hover_row, true);   // always named, thinned out or not
    draw->PopClipRect();
    // A rotated label's lower edge dips below its anchor, onto the map's first row.
    draw->PushClipRect(ImVec2(g.min.x - line, origin.y), ImVec2(g.max().x + g.min.y - origin.y, g.min.y + line), true);
    for (int j = col_from - col_from % key_step; j < std::min(col_to, n_keys); j += key_step) {
        if (j >= col_from && j != hover_col) key(j);
    }
    if (hover_col >= 0 && hover_col < n_keys) key(hover_col);
    draw->PopClipRect();
}

// The wheel zooms about the pointer, a drag pans, a double-click or F fits. Returns true
// when the left button was released without a drag (a click).
bool handle_map_input(const HeatmapGeometry& g, MapZoom& zoom, MapDrag drag, int rows, int cols, float fit) {
    const ImGuiIO& io = ImGui::GetIO();
    ImGui::SetItemUsingMouseWheel();   // the wheel zooms the map; the page does not scroll under it
    const bool hovered = ImGui::IsItemHovered();
    if (hovered && io.MouseWheel != 0.0f) {
        const float col = cell_at(zoom.first_col, io.MousePos.x - g.min.x, g.cell);
        const float row = cell_at(zoom.first_row, io.MousePos.y - g.min.y, g.cell);
        zoom_about(zoom, std::pow(1.25f, io.MouseWheel), col, row, rows, cols, fit);
    }
    // F as a typed character: Dear ImGui 1.86 names no key F, and characters are the backend's own.
    bool typed_f = false;
    for (const ImWchar c : io.InputQueueCharacters) typed_f = typed_f || c == 'f' || c == 'F';
    if (hovered && (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) || (!io.WantTextInput && typed_f))) {
        zoom = MapZoom{};
    }
    const bool panning =
        ImGui::IsItemActive() && (ImGui::IsMouseDragging(ImGuiMouseButton_Middle) ||
                                  (drag == MapDrag::pans && ImGui::IsMouseDragging(ImGuiMouseButton_Left)));
    if (panning) pan(zoom, -io.MouseDelta.x / g.cell, -io.MouseDelta.y / g.cell, rows, cols);
    const float threshold = io.MouseDragThreshold;
    return ImGui::IsItemDeactivated() && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
           io.MouseDragMaxDistanceSqr[ImGuiMouseButton_Left] < threshold * threshold;
}

void draw_cell_tooltip(const Matrix& weights, const Matrix* scores, const Mask* allowed, const HeatmapLabels& labels,
                       int i, int j, const MapZoom& zoom) {
    const bool masked = allowed && !(*allowed)(i, j);
    const auto name = [](const std::vector<std::string>& all, int at) {
        return at < static_cast<int>(all.size()) ? visible_token(all[static_cast<std::size_t>(at)]) : std::string();
    };
    ImGui::BeginTooltip();
    ImGui::Text("query %d  %s", i, name(labels.queries, i).c_str());
    ImGui::Text("key   %d  %s", j, name(labels.keys, j).c_str());
    if (masked) {
        ImGui::TextUnformatted("masked (not allowed): weight 0");
    } else {
        ImGui::Text("weight %.4f", static_cast<double>(weights(i, j)));
    }
    // As the softmax reads it: q.k under the model's own scale (T5: none; Gemma: its scalar
    // and soft cap), with T5's bias by position where it has one (the Stages view names them).
    if (scores != nullptr) ImGui::Text("score  %.4f  (before the softmax)", static_cast<double>((*scores)(i, j)));
    if (zoom.zoom > 1.0f) ImGui::TextDisabled("zoom %.1fx: wheel, drag to pan, double-click or F to fit", zoom.zoom);
    ImGui::TextDisabled("Ctrl+C: copy");
    ImGui::EndTooltip();
    if (copy_key_pressed()) {
        // A header and one row, tab-separated: it pastes into a spreadsheet as two rows.
        char value[32];
        std::snprintf(value, sizeof value, "%.9g", static_cast<double>(weights(i, j)));
        // Appended piece by piece: GCC 12 mis-warns (-Wrestrict) on "literal" + std::string.
        std::string text("query\tquery token\tkey\tkey token\tweight");
        if (scores != nullptr) text.append("\tscore");
        text.append("\n").append(std::to_string(i)).append("\t").append(name(labels.queries, i));
        text.append("\t").append(std::to_string(j)).append("\t").append(name(labels.keys, j));
        text.append("\t").append(masked ? "masked" : value);
        if (scores != nullptr) {
            std::snprintf(value, sizeof value, "\t%.9g", static_cast<double>((*scores)(i, j)));
            text.append(value);
        }
        copy_to_clipboard(text.append("\n"));
    }
}

}   // namespace

HeatmapGeometry heatmap_geometry(const Matrix& weights, const HeatmapLabels& labels, ImVec2 room, ImVec2 origin,
                                 const MapZoom& zoom) {
    const float left = label_band_left(labels);
    const float top = label_band_top(labels);
    const float fit = fit_cell(weights, left, top, room);
    const ImVec2 size(fit * static_cast<float>(weights.cols()), fit * static_cast<float>(weights.rows()));
    return {ImVec2(origin.x + left, origin.y + top), size, fit * zoom.zoom, zoom.first_col, zoom.first_row};
}

int draw_heatmap(const char* id, const Matrix& weights, const Matrix* scores, const Mask* allowed,
                 const HeatmapTexture& texture, const HeatmapLabels& labels, ImVec2 room, MapZoom& zoom, MapDrag drag,
                 int pinned_row, const HoverLines& hover) {
    ImGui::PushID(id);
    const auto Tq = static_cast<int>(weights.rows());
    const auto Tk = static_cast<int>(weights.cols());
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    keep_inside(zoom, Tq, Tk);   // the map may have changed size since the last frame
    const float fit = heatmap_geometry(weights, labels, room, origin).cell;
    // The input first, so that this frame already draws what the wheel or drag asked.
    ImGui::SetCursorScreenPos(heatmap_geometry(weights, labels, room, origin).min);
    HeatmapGeometry g = heatmap_geometry(weights, labels, room, origin, zoom);
    ImGui::InvisibleButton("cells", g.size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle);
    const bool clicked = handle_map_input(g, zoom, drag, Tq, Tk, fit);
    const bool hovered = ImGui::IsItemHovered();
    g = heatmap_geometry(weights, labels, room, origin, zoom);

    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 uv0(zoom.first_col / static_cast<float>(Tk), zoom.first_row / static_cast<float>(Tq));
    const ImVec2 uv1((zoom.first_col + cols_in_sight(zoom, Tk)) / static_cast<float>(Tk),
                     (zoom.first_row + rows_in_sight(zoom, Tq)) / static_cast<float>(Tq));
    draw->AddImage(texture.id(), g.min, g.max(), uv0, uv1);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const int i = hovered ? g.row_under(mouse.y, Tq) : -1;
    const int j = hovered ? g.col_under(mouse.x, Tk) : -1;
    draw_axis_labels(g, origin, labels, Tq, Tk, i, j);
    draw->PushClipRect(ImVec2(g.min.x - 3.0f, g.min.y - 3.0f), ImVec2(g.max().x + 3.0f, g.max().y + 3.0f), true);
    if (pinned_row >= 0 && pinned_row < Tq) {
        const float y = g.at(static_cast<float>(pinned_row), 0.0f).y;
        draw->AddRect(ImVec2(g.min.x - 2, y - 1), ImVec2(g.max().x + 2, y + g.cell + 1), IM_COL32(255, 255, 255, 255),
                      0.0f, 0, 2.0f);
    }
    if (hovered) {
        const ImVec2 a = g.at(static_cast<float>(i), static_cast<float>(j));
        draw->AddRect(a, ImVec2(a.x + g.cell, a.y + g.cell), IM_COL32(255, 255, 255, 255));
        if (hover) {
            ImGui::BeginTooltip();
            hover(i, j);
            ImGui::EndTooltip();
        } else {
            draw_cell_tooltip(weights, scores, allowed, labels, i, j, zoom);
        }
    }
    draw->PopClipRect();
    ImGui::SetCursorScreenPos(ImVec2(origin.x, g.max().y + 4.0f));
    ImGui::Dummy(ImVec2(g.max().x - origin.x, 0.0f));
    ImGui::PopID();
    return clicked ? g.row_under(mouse.y, Tq) : -1;
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
