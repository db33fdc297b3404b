#include "tests/gui/harness/item_rects.h"

#include "core/base/error.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace headscope::gui {

namespace {

struct ItemRect {
    std::string window;
    ImGuiID id = 0;
    ImRect item;
    ImRect clip;
    bool scrollbar_x = false;
    bool scrollbar_y = false;
};

// Test-only process state: ItemAdd's wrapper has no other way in.
bool recording = false;
std::vector<ItemRect> items;

}   // namespace

void record_item_rects() { recording = true; }
void clear_item_rects() { items.clear(); }

void write_item_rects(const std::string& path) {
    std::ofstream out(path);
    for (const ItemRect& r : items) {
        char line[512];
        std::snprintf(line, sizeof line, "%s\t%u\t%.1f %.1f %.1f %.1f\t%.1f %.1f %.1f %.1f\t%d %d\n", r.window.c_str(),
                      r.id, r.item.Min.x, r.item.Min.y, r.item.Max.x, r.item.Max.y, r.clip.Min.x, r.clip.Min.y,
                      r.clip.Max.x, r.clip.Max.y, r.scrollbar_x ? 1 : 0, r.scrollbar_y ? 1 : 0);
        out << line;
    }
    if (!out) throw Error("cannot write the item rectangles to " + path);
}

}   // namespace headscope::gui

// ld --wrap=_ZN5ImGui7ItemAddERK6ImRectjPS1_i: widgets' calls to ImGui::ItemAdd land here.
extern "C" bool __real__ZN5ImGui7ItemAddERK6ImRectjPS1_i(const ImRect& bb, ImGuiID id, const ImRect* nav_bb,
                                                         ImGuiItemFlags flags);

extern "C" bool __wrap__ZN5ImGui7ItemAddERK6ImRectjPS1_i(const ImRect& bb, ImGuiID id, const ImRect* nav_bb,
                                                         ImGuiItemFlags flags) {
    using namespace headscope::gui;
    if (recording) {
        const ImGuiWindow* window = ImGui::GetCurrentWindowRead();
        // A scroll bar of the window or of one it sits in: what it cuts off can be scrolled to.
        bool scroll_x = false;
        bool scroll_y = false;
        for (const ImGuiWindow* w = window; w != nullptr;
             w = (w->Flags & ImGuiWindowFlags_ChildWindow) ? w->ParentWindow : nullptr) {
            scroll_x = scroll_x || w->ScrollbarX;
            scroll_y = scroll_y || w->ScrollbarY;
        }
        items.push_back({window->Name, id, bb, window->InnerClipRect, scroll_x, scroll_y});
    }
    return __real__ZN5ImGui7ItemAddERK6ImRectjPS1_i(bb, id, nav_bb, flags);
}
