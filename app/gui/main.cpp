// headscope: the desktop app. A linear main loop (init, loop: poll, new frame, draw,
// render, swap; shutdown in reverse), as Dear ImGui's GLFW + OpenGL 3 example.

#include "app/gui/app_window.h"
#include "app/gui/screenshot.h"
#include "core/error.h"
#include "core/png_export.h"

#include <CLI/CLI.hpp>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

// Used when assets/default_sentence.txt cannot be read (an app copied elsewhere).
constexpr const char* fallback_sentence = "The cat sat on the mat because the cat was tired .";

std::string default_sentence() {
    std::ifstream in(HEADSCOPE_ASSETS_DIR "/default_sentence.txt");
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) return line;
    return fallback_sentence;
}

// GLFW reports errors through a callback; print them, one line each.
void print_glfw_error(int code, const char* description) {
    std::fprintf(stderr, "headscope: GLFW error %d: %s\n", code, description);
}

} // namespace

int main(int argc, char** argv) {
    using namespace headscope;
    gui::AppState state;
    state.text = default_sentence();
    state.image_path = HEADSCOPE_ASSETS_DIR "/shapes.png";
    std::string screenshot_path;
    std::string colormap_name = "viridis";
    int width = 1280;
    int height = 800;

    CLI::App cli("Headscope: see what every attention head attends to", "headscope");
    cli.add_option("--model", state.model, "builtin:toy-text or builtin:toy-vit")->capture_default_str();
    cli.add_option("--text", state.text, "The sentence to show (text models)")->capture_default_str();
    cli.add_option("--image", state.image_path, "The image to show (image models)")->capture_default_str();
    cli.add_flag("--causal", state.causal, "Start with the causal mask on");
    cli.add_option("--layer", state.layer, "Selected layer")->check(CLI::Range(0, 63));
    cli.add_option("--head", state.selected_head, "Selected head")->check(CLI::Range(0, 255));
    cli.add_option("--seed", state.config.seed, "Seed of the demo model's weights and embeddings");
    cli.add_option("--colormap", colormap_name, "viridis, magma, cividis or greys")
        ->check(CLI::IsMember({"viridis", "magma", "cividis", "greys"}));
    cli.add_option("--size", width, "Window width in pixels")->check(CLI::Range(320, 8192));
    cli.add_option("--height", height, "Window height in pixels")->check(CLI::Range(240, 8192));
    cli.add_option("--screenshot", screenshot_path,
                   "Render one frame once the result is ready, write it to this PNG and exit");
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "headscope: %s (see headscope --help)\n", e.what());
        return 2;
    }
    state.colormap = colormap_from_name(colormap_name).value_or(Colormap::viridis);
    const bool screenshot_mode = !screenshot_path.empty();

    glfwSetErrorCallback(print_glfw_error);
    if (!glfwInit()) {
        std::fprintf(stderr, "headscope: cannot open a window (no display? run under xvfb-run for headless use)\n");
        return 1;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    if (screenshot_mode) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow* window = glfwCreateWindow(width, height, "Headscope", nullptr, nullptr);
    if (!window) {
        std::fprintf(stderr, "headscope: cannot create an OpenGL 3.0 window\n");
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(screenshot_mode ? 0 : 1);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;   // the layout is fixed; nothing to persist yet
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 130");

    int exit_code = 0;
    {
        gui::AppWindow app(state);
        // ImGui settles its layout over the first frames; capture after a few.
        constexpr int screenshot_frame = 4;
        for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
            if (!screenshot_mode && glfwGetWindowAttrib(window, GLFW_ICONIFIED)) {
                glfwWaitEvents();   // sleep while minimised
                continue;
            }
            glfwPollEvents();
            app.update();

            ImGui_ImplOpenGL3_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            ImGui::NewFrame();
            app.draw();
            ImGui::Render();

            int fb_width = 0;
            int fb_height = 0;
            glfwGetFramebufferSize(window, &fb_width, &fb_height);
            glViewport(0, 0, fb_width, fb_height);
            glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

            if (screenshot_mode && frame == screenshot_frame) {
                try {
                    write_png(screenshot_path, gui::capture_framebuffer(fb_width, fb_height));
                    if (!app.error().empty()) {
                        std::fprintf(stderr, "headscope: %s\n", app.error().c_str());
                        exit_code = 2;
                    }
                } catch (const Error& e) {
                    std::fprintf(stderr, "headscope: %s\n", e.what());
                    exit_code = 2;
                }
                break;
            }
            glfwSwapBuffers(window);
        }
    }   // textures are released while the GL context still exists

    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return exit_code;
}
