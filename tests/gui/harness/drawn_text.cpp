#include "tests/gui/harness/drawn_text.h"

#include "core/base/error.h"

#include <imgui.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace headscope::gui {

namespace {

struct DrawnText {
    ImVec2 at;
    std::string text;
};

// Test-only process state: AddText's wrappers have no other way in.
bool recording = false;
std::vector<DrawnText> drawn;

void note(const ImVec2& at, const char* begin, const char* end) {
    if (!recording || begin == nullptr) return;
    drawn.push_back({at, end != nullptr ? std::string(begin, end) : std::string(begin)});
}

}   // namespace

void record_drawn_text() { recording = true; }
void clear_drawn_text() { drawn.clear(); }

void write_drawn_text(const std::string& path) {
    std::ofstream out(path);
    for (const DrawnText& d : drawn) {
        std::string text;
        for (const char c : d.text) {
            if (c == '\n') {
                text += "\\n";
            } else if (c == '\\') {
                text += "\\\\";
            } else {
                text += c;
            }
        }
        char at[64];
        std::snprintf(at, sizeof at, "%.1f %.1f\t", d.at.x, d.at.y);
        out << at << text << '\n';
    }
    if (!out) throw Error("cannot write the drawn text to " + path);
}

}   // namespace headscope::gui

// ld --wrap for ImDrawList::AddText(pos, col, text_begin, text_end) and
// ImDrawList::AddText(font, font_size, pos, col, text_begin, text_end, wrap_width, clip).
extern "C" void __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos, ImU32 col,
                                                                const char* text_begin, const char* text_end);
extern "C" void __wrap__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos, ImU32 col,
                                                                const char* text_begin, const char* text_end) {
    headscope::gui::note(pos, text_begin, text_end);
    __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(self, pos, col, text_begin, text_end);
}

extern "C" void __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float font_size, const ImVec2& pos, ImU32 col, const char* text_begin,
    const char* text_end, float wrap_width, const ImVec4* cpu_fine_clip_rect);
extern "C" void __wrap__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float font_size, const ImVec2& pos, ImU32 col, const char* text_begin,
    const char* text_end, float wrap_width, const ImVec4* cpu_fine_clip_rect) {
    headscope::gui::note(pos, text_begin, text_end);
    __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(self, font, font_size, pos, col, text_begin,
                                                                        text_end, wrap_width, cpu_fine_clip_rect);
}
