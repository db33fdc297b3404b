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
    // Its own settings (its zoom, its mode and options) as a JSON object's text
    // (session/view_settings.h): what a session keeps of it; empty: none.
    virtual std::string settings() const { return {}; }
    // Reads settings back (a session opened, a command-line flag, another view sending
    // the user here): the fields given over the current ones, the rest kept. Empty, or why
    // they could not be read (then nothing changed).
    virtual std::string restore(const std::string& /*settings*/) { return {}; }
    // A model of another name or shape is in: settings naming a layer or head are brought
    // into its range, and what belonged to the last model's positions is let go.
    virtual void fit_to_model(const ModelInfo& /*info*/) {}
    // A result of `n_tokens` positions is in: a row chosen past its end is let go.
    virtual void fit_to_length(int /*n_tokens*/) {}
};

}   // namespace headscope::ui
