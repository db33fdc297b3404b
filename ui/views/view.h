#pragma once
// A view: one tab of the window, drawing the shown snapshot. Adding a view is one file
// here, ui/views/<name>_view.cpp (its class and its factory, make_<name>_view), and its
// factory's name in view_list.cpp, which orders the tabs and --view's names.

#include "session/app_state.h"
#include "session/export_map.h"

#include <optional>
#include <string>

#include <string_view>

namespace headscope::ui {

class ViewContext;

class View {
public:
    virtual ~View() = default;
    // Its --view name ("matrix"): lower case, one word.
    virtual std::string_view name() const = 0;
    // Its tab's title ("Matrix").
    virtual const char* title() const = 0;
    // One line for --view's help.
    virtual std::string_view summary() const = 0;
    // What it needs computed beyond the maps while it is shown (the Stages view: every
    // stage of the layer; the Compare view: a flipped mask or a second input).
    virtual session::ViewNeeds needs(const session::AppState& /*state*/) const { return {}; }
    // Draws into the current ImGui window; called only while its tab is open and the
    // snapshot shown belongs to the chosen model.
    virtual void draw(ViewContext& context) = 0;
    // The part of the selected head's map in sight when zoomed in (File > Export's "only
    // the part in sight"); nullopt when the whole map is shown or the view draws none.
    virtual std::optional<session::MapRegion> map_in_sight() const { return std::nullopt; }
    // Its own settings a session keeps (its zoom), as a JSON object's text; empty: none.
    virtual std::string settings() const { return {}; }
    // Reads them back (a session opened): empty, or why they could not be read (then
    // they are left as they were).
    virtual std::string restore(const std::string& /*settings*/) { return {}; }
};

}   // namespace headscope::ui
