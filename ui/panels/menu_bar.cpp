#include "ui/panels/menu_bar.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

namespace headscope::ui {

namespace {

void choose(MenuChoice& choice, MenuAction action) { choice.action = action; }

}   // namespace

MenuChoice draw_menu_bar(const MenuState& state, const std::vector<std::unique_ptr<View>>& views) {
    MenuChoice choice;
    if (!ImGui::BeginMenuBar()) return choice;
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open session...", "Ctrl+O")) choose(choice, MenuAction::open_session);
        if (ImGui::MenuItem("Save session...", "Ctrl+S")) choose(choice, MenuAction::save_session);
        ImGui::Separator();
        if (ImGui::MenuItem("Export...", "Ctrl+E", false, state.has_result)) choose(choice, MenuAction::export_map);
        ImGui::Separator();
        if (ImGui::MenuItem("Quit", "Ctrl+Q")) choose(choice, MenuAction::quit);
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Edit")) {
        if (ImGui::MenuItem("Undo", "Ctrl+Z", false, state.can_undo)) choose(choice, MenuAction::undo);
        if (ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, state.can_redo)) choose(choice, MenuAction::redo);
        ImGui::Separator();
        if (ImGui::MenuItem("Enable every head", nullptr, false, state.any_head_disabled)) {
            choose(choice, MenuAction::enable_all_heads);
        }
        if (ImGui::MenuItem("Clear the custom mask", nullptr, false, state.any_pair_masked)) {
            choose(choice, MenuAction::clear_mask);
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        for (const auto& view : views) {
            if (ImGui::MenuItem(view->title(), nullptr, view->name() == state.view)) choice.view = view->name();
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(view->summary()).c_str());
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Help")) {
        if (ImGui::MenuItem("Keys and mouse")) choose(choice, MenuAction::show_keys);
        if (ImGui::MenuItem("About Headscope")) choose(choice, MenuAction::show_about);
        ImGui::EndMenu();
    }
    ImGui::EndMenuBar();
    return choice;
}

void draw_help_windows(bool& keys_open, bool& about_open) {
    if (keys_open) {
        ImGui::SetNextWindowSize(ImVec2(px(520.0f), 0.0f), ImGuiCond_Appearing);
        if (ImGui::Begin("Keys and mouse", &keys_open, ImGuiWindowFlags_NoCollapse)) {
            constexpr const char* keys[][2] = {
                {"Up / Down", "previous / next layer"},
                {"Left / Right", "previous / next head"},
                {"C", "causal mask on / off"},
                {"Esc", "stop loading or computing"},
                {"Ctrl+Z", "undo a change of input, mask or disabled heads"},
                {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
                {"Ctrl+O, Ctrl+S", "open, save a session (every choice, as JSON)"},
                {"Ctrl+E", "export a map (CSV, NPY, PNG, SVG), every head, or the Heads table"},
                {"Ctrl+L", "type the labels a CLIP model scores the picture against"},
                {"Ctrl+Q", "quit"},
                {"Wheel over a map", "zoom about the pointer (Matrix; Compare: all three maps)"},
                {"Ctrl+C over a map", "copy the hovered cell (Matrix, Compare, Stages)"},
                {"Drag the bar left of the views", "widen the controls (double-click: back)"},
                {"Drag on a map", "pan a zoomed map (middle button while editing the mask)"},
                {"Double-click, F", "fit the whole map again"},
                {"Click a row", "pin that query (Matrix, Tokens)"},
            };
            if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg)) {
                for (const auto& [key, what] : keys) {
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(key);
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(what);
                }
                ImGui::EndTable();
            }
        }
        ImGui::End();
    }
    if (about_open) {
        if (ImGui::Begin("About Headscope", &about_open,
                         ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
            ImGui::Text("Headscope %s", HEADSCOPE_VERSION);
            ImGui::TextUnformatted("What every attention head of a transformer attends to, live.");
            ImGui::Separator();
            ImGui::TextUnformatted("Built on Dear ImGui (MIT), GLFW (zlib), Eigen (MPL 2.0), nlohmann-json (MIT),\n"
                                   "CLI11 (BSD-3-Clause), stb (MIT / public domain), libjpeg-turbo (BSD-style,\n"
                                   "IJG), utf8proc (MIT), Oniguruma (BSD-2-Clause) and zlib (zlib), as Debian\n"
                                   "ships them; each one's licence is in /usr/share/doc/<package>/copyright.");
        }
        ImGui::End();
    }
}

}   // namespace headscope::ui
