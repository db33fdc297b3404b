#pragma once
// The GLFW window with its OpenGL 3 context and Dear ImGui on it, as Dear ImGui's GLFW +
// OpenGL 3 example sets them up; shut down in reverse when it goes.

#include "app/gui/options.h"

struct GLFWwindow;

namespace headscope::gui {

class Platform {
public:
    // Prints one line on stderr and leaves window() null when no window can be opened.
    explicit Platform(const GuiOptions& options);
    ~Platform();
    Platform(const Platform&) = delete;
    Platform& operator=(const Platform&) = delete;

    GLFWwindow* window() const { return window_; }
    void begin_frame();
    // Renders ImGui's draw data over the cleared framebuffer; returns its size.
    void render(int& framebuffer_width, int& framebuffer_height);

private:
    bool glfw_ = false;
    GLFWwindow* window_ = nullptr;
};

}   // namespace headscope::gui
