#pragma once
// The window's menu bar, as desktop apps have one: File (export the map, open and save a
// session, quit), Edit
// (undo, redo, enable every head, clear the custom mask), View (the views, fit the map)
// and Help (the keys, about). It says what was chosen; the window does it.

#include "ui/views/view.h"

#include <memory>
#include <string>
#include <vector>

namespace headscope::ui {

enum class MenuAction {
    none,
    export_map,
    open_session,
    save_session,
    quit,
    undo,
    redo,
    enable_all_heads,
    clear_mask,
    show_keys,
    show_about,
};

// What the menus may offer this frame.
struct MenuState {
    bool has_result = false;   // a result of the chosen model is on screen
    bool can_undo = false;
    bool can_redo = false;
    bool any_head_disabled = false;
    bool any_pair_masked = false;
    std::string view;   // the shown view's name
};

struct MenuChoice {
    MenuAction action = MenuAction::none;
    std::string view;   // a view chosen in the View menu, or empty
};

// Inside a window begun with ImGuiWindowFlags_MenuBar.
MenuChoice draw_menu_bar(const MenuState& state, const std::vector<std::unique_ptr<View>>& views);

// The Keys and About windows, while open (`keys_open` / `about_open` cleared on close).
void draw_help_windows(bool& keys_open, bool& about_open);

}   // namespace headscope::ui
