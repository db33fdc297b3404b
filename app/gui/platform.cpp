#include "app/gui/platform.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace headscope::gui {

namespace {

// GLFW reports errors through a callback; print them, one line each.
void print_glfw_error(int code, const char* description) {
    std::fprintf(stderr, "headscope: GLFW error %d: %s\n", code, description);
}

// A real UI font where Debian's fonts-dejavu-core is installed; ImGui's own otherwise.
void load_font(float scale) {
    ImGuiIO& io = ImGui::GetIO();
    const char* path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
    if (std::filesystem::exists(path)) {
        static const ImWchar ranges[] = {0x0020, 0x024F, 0x0370, 0x03FF, 0x0400, 0x04FF,
                                         0x2000, 0x206F, 0x2190, 0x21FF, 0};
        if (io.Fonts->AddFontFromFileTTF(path, 15.0f * scale, nullptr, ranges)) return;
    }
    ImFontConfig config;
    config.SizePixels = 13.0f * scale;
    io.Fonts->AddFontDefault(&config);
}

void init_imgui(GLFWwindow* window, float chosen_scale) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;   // the layout is fixed; nothing to persist yet
    ImGui::StyleColorsDark();
    // Pop-ups (lists, menus, tooltips) and windows (Export, Help) opaque: the dark style's
    // are see-through over maps.
    ImGui::GetStyle().Colors[ImGuiCol_PopupBg].w = 1.0f;
    ImGui::GetStyle().Colors[ImGuiCol_WindowBg].w = 1.0f;
    // HiDPI: scale text and spacing by the monitor's content scale (or --scale's); the
    // ui's own sizes follow the font (ui/widgets/ui_scale.h).
    float scale_x = 1.0f;
    float scale_y = 1.0f;
    glfwGetWindowContentScale(window, &scale_x, &scale_y);
    const float scale = chosen_scale > 0.0f ? chosen_scale : std::max(1.0f, std::max(scale_x, scale_y));
    ImGui::GetStyle().ScaleAllSizes(scale);
    load_font(scale);
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 130");
}

}   // namespace

Platform::Platform(const GuiOptions& options) {
    glfwSetErrorCallback(print_glfw_error);
    glfw_ = glfwInit() == GLFW_TRUE;
    if (!glfw_) {
        std::fprintf(stderr, "headscope: cannot open a window (no display? run under xvfb-run for headless use)\n");
        return;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    if (options.hidden()) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    window_ = glfwCreateWindow(options.width, options.height, "Headscope", nullptr, nullptr);
    if (window_ == nullptr) {
        std::fprintf(stderr, "headscope: cannot create an OpenGL 3.0 window\n");
        return;
    }
    glfwMakeContextCurrent(window_);
    // The harness draws every frame as fast as it can; a user's window waits for vsync.
    glfwSwapInterval(options.hidden() || options.test_mode || options.bench_frames > 0 ? 0 : 1);
    init_imgui(window_, options.scale);
}

Platform::~Platform() {
    if (window_ != nullptr) {
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplGlfw_Shutdown();
        ImGui::DestroyContext();
        glfwDestroyWindow(window_);
    }
    if (glfw_) glfwTerminate();
}

void Platform::begin_frame() {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
}

void Platform::render(int& framebuffer_width, int& framebuffer_height) {
    ImGui::Render();
    glfwGetFramebufferSize(window_, &framebuffer_width, &framebuffer_height);
    glViewport(0, 0, framebuffer_width, framebuffer_height);
    // The main window draws no background (ui/app_window.cpp): the clear is its colour.
    const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(background.x, background.y, background.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

}   // namespace headscope::gui
