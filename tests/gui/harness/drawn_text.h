#pragma once
// `--drawn-text FILE` in the test build of the window, with --screenshot: every piece of
// text the screenshot's frame drew, and where. The build links Dear ImGui with ld's
// --wrap for both ImDrawList::AddText overloads: the calls the views make to put labels
// straight onto a draw list (a map's axes, the Model grid's head numbers, the names of
// the Similarity view's dots), and the calls imgui.cpp makes to draw every widget's text
// (imgui_draw.cpp's own calls between the two overloads are not seen, so nothing is noted
// twice). The tests read the file for labels that a screenshot's pixels cannot name.

#include <string>

namespace headscope::gui {

// Starts noting the text drawn from now on (that of one frame: clear_drawn_text at its start).
void record_drawn_text();
void clear_drawn_text();
// One line per piece of text of the frame so far: x <SPACE> y <TAB> text (its top left
// corner in pixels; a line end in the text written as \n, a backslash as \\).
void write_drawn_text(const std::string& path);

}   // namespace headscope::gui
