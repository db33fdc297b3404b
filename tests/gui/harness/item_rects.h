#pragma once
// `--item-rects FILE` in the test build of the window: where every widget of a frame
// lies. The build links Dear ImGui with ld's --wrap for ImGui::ItemAdd, the call each
// widget (button, checkbox, text, slider, selectable, table header, image...) makes to
// take its place: the wrapper notes the item's rectangle and its window's before handing
// it on. --wrap redirects calls between Dear ImGui's object files only: items that
// imgui.cpp adds itself (a child window as an item of its parent, a group) are not seen,
// nor is text drawn straight onto a draw list (a map's axis labels). The
// layout tests read the file and look for controls that overlap or are cut off.

#include <string>

namespace headscope::gui {

// Starts noting every item from now on (the items of one frame: clear_item_rects at its start).
void record_item_rects();
void clear_item_rects();
// One line per item of the frame so far:
//   window <TAB> id <TAB> x0 y0 x1 y1 <TAB> clip x0 y0 x1 y1 <TAB> scrollbar_x scrollbar_y
// (the window's visible inner rectangle, and 1 where it, or a window it sits in, shows a
// scroll bar on that axis).
void write_item_rects(const std::string& path);

}   // namespace headscope::gui
