// The desktop app's program. A linear main loop (init; loop: poll, update, draw, render,
// swap; shutdown in reverse), as Dear ImGui's GLFW + OpenGL 3 example. The harness modes
// hook in after each frame (frame_hooks.h, harness_modes.h).

#include "app/gui/frame_hooks.h"
#include "app/gui/harness_modes.h"
#include "app/gui/options.h"
#include "app/gui/platform.h"
#include "core/base/error.h"
#include "core/tensor/memory_reuse.h"
#include "session/recent.h"
#include "session/session_file.h"
#include "ui/app_window.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

namespace {

using headscope::ui::AppWindow;

// Keys go to Dear ImGui's backend as before, and as events to the window's shortcuts: a
// key that goes down and up between two frames is never seen by a per-frame key state.
void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
    ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
    auto* app = static_cast<AppWindow*>(glfwGetWindowUserPointer(window));
    if (app == nullptr || (action != GLFW_PRESS && action != GLFW_REPEAT)) return;
    app->on_key({key, (mods & GLFW_MOD_CONTROL) != 0, (mods & GLFW_MOD_SHIFT) != 0, action == GLFW_REPEAT});
}

void on_drop(GLFWwindow* window, int count, const char** paths) {
    auto* app = static_cast<AppWindow*>(glfwGetWindowUserPointer(window));
    if (app && count > 0) app->on_drop(paths[0]);
}

// A window at rest sleeps: redrawing an unchanged picture at 60 fps takes CPU the model
// needs (with software rendering, most of two cores). After input or a result it draws a
// few frames (ImGui settles hover and layout over two or three), then waits for the next
// event, the worker's wake-up, or a timeout that refreshes progress bars (one frame).
// While the worker computes, progress is drawn with a fifth of the time at most: a frame
// of a 1,000-token map under software rendering takes 100-250 ms, and at ten such frames
// a second the worker, at idle priority, got so little of the cores that a head toggled
// at T = 1,000 took 4.4 s instead of 0.9 s. The first progress frame comes a quarter of a
// second into the work, later ones every half second: each takes a core from one of the
// worker's threads, and its parallel loops then all wait for the one held up.
class IdleWait {
public:
    void before_frame(AppWindow& app, std::chrono::steady_clock::duration previous_frame) {
        if (frames_left_ > 0 || !app.still()) return;
        const bool working = app.working();
        const double frame_s = std::chrono::duration<double>(previous_frame).count();
        const double slept_from = glfwGetTime();
        if (!working) working_since_.reset();
        if (working && !working_since_) working_since_ = slept_from;
        const bool first_progress = working && slept_from - *working_since_ < 0.25;
        const double period = !working         ? 0.5
                              : first_progress ? std::max(0.25, 4.0 * frame_s)
                                               : std::max(0.5, 8.0 * frame_s);
        double timeout = period;
        bool early = false;
        bool extended = false;
        for (;;) {
            double left = timeout - (glfwGetTime() - slept_from);
            // Every layer done: the result is nearer than anything a progress frame would
            // add, and a frame drawn just before it lands puts it on screen a frame late.
            if (left <= 0.0 && working && !extended && app.only_output_left()) {
                extended = true;
                timeout += period;
                left = timeout - (glfwGetTime() - slept_from);
            }
            if (left <= 0.0) break;
            glfwWaitEventsTimeout(left);
            early = glfwGetTime() - slept_from < timeout;
            // A layer landed: drawn when the timeout is up, not at once (input and a
            // result are drawn at once; a result ends the work).
            if (!(early && app.working() && app.take_progress_wake())) break;
            early = false;
        }
        // Woken early: input or a result, worth a few frames (one while computing). Timed out: one.
        frames_left_ = early && !working ? 3 : 1;
    }
    void after_frame(const AppWindow& app) {
        frames_left_ = app.still() ? frames_left_ - 1 : 3;
        if (!app.working()) working_since_.reset();
    }

private:
    int frames_left_ = 3;
    std::optional<double> working_since_;   // glfwGetTime() when the work in progress was first seen
};

void run_loop(headscope::gui::Platform& platform, AppWindow& app, headscope::gui::FrameHook* hook) {
    GLFWwindow* window = platform.window();
    const bool sleeps = hook == nullptr || hook->lets_loop_sleep();
    if (sleeps) app.set_wake([] { glfwPostEmptyEvent(); });
    IdleWait idle;
    // The previous frame's busy time, swap included (the rasterising, under llvmpipe):
    // how much of the next one may go to rebuilding textures.
    std::chrono::steady_clock::duration previous_frame{};
    std::string title;   // as last set
    for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
        if (hook == nullptr && glfwGetWindowAttrib(window, GLFW_ICONIFIED)) {
            glfwWaitEvents();   // sleep while minimised
            continue;
        }
        if (sleeps) idle.before_frame(app, previous_frame);
        const auto frame_start = std::chrono::steady_clock::now();
        if (hook) hook->frame_started();
        glfwPollEvents();
        app.update();
        if (std::string now = app.title(); now != title) {
            glfwSetWindowTitle(window, now.c_str());
            title = std::move(now);
        }
        platform.begin_frame();
        app.draw(previous_frame);
        int width = 0;
        int height = 0;
        platform.render(width, height);
        if (hook && hook->after_render({frame, width, height, glfwGetTime()})) break;
        if (app.quit_requested()) glfwSetWindowShouldClose(window, GLFW_TRUE);
        if (sleeps) idle.after_frame(app);
        glfwSwapBuffers(window);
        previous_frame = std::chrono::steady_clock::now() - frame_start;
        if (hook) hook->after_swap(frame_start);
    }
}

}   // namespace

namespace headscope::gui {

int run_window(int argc, char** argv, HarnessModes* modes) {
    reuse_freed_memory();
    ParsedOptions parsed = parse_options(argc, argv, modes);
    if (!parsed.options) return parsed.exit_code;
    const GuiOptions& options = *parsed.options;
    Platform platform(options);
    if (platform.window() == nullptr) return 1;
    const bool harness = modes != nullptr && modes->chosen();
    std::string recent_path = harness ? modes->recent_list_path() : std::string();
    if (recent_path.empty()) recent_path = session::recent_file_path();
    int exit_code = 0;
    {   // the window's textures go while the GL context still exists
        AppWindow app(options.state, recent_path);
        if (options.scan_importance) app.scan_importance_when_ready();
        if (options.select_showcase_head) app.select_showcase_head_when_ready();
        app.check_start_choices_when_ready(options.start_choices);
        glfwSetWindowUserPointer(platform.window(), &app);
        glfwSetDropCallback(platform.window(), on_drop);
        glfwSetKeyCallback(platform.window(), on_key);   // in place of the backend's, which on_key calls
        std::unique_ptr<FrameHook> hook = make_frame_hook(options, app);
        if (harness) hook = modes->make_hook(options, app, std::move(hook));
        try {
            run_loop(platform, app, hook.get());
        } catch (const std::exception& e) {
            if (!hook || !hook->absorb(e.what())) throw;
        }
        if (hook) exit_code = hook->finish();
        if (!options.last_session.empty()) {
            // Where the window was left, for the next plain launch (`--fresh` skips it).
            try {
                std::error_code made;   // the config folder, the first time (a failure is reported below)
                std::filesystem::create_directories(std::filesystem::path(options.last_session).parent_path(), made);
                session::save_session(options.last_session, app.session_state());
            } catch (const Error& e) {
                std::fprintf(stderr, "headscope: the session was not kept for the next launch (%s)\n", e.what());
            }
        }
        glfwSetWindowUserPointer(platform.window(), nullptr);
    }
    return exit_code;
}

}   // namespace headscope::gui
