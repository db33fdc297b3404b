// headscope: the desktop app. A linear main loop (init, loop: poll, new frame, draw,
// render, swap; shutdown in reverse), as Dear ImGui's GLFW + OpenGL 3 example.

#include "app/common/arg_lists.h"
#include "app/gui/app_window.h"
#include "app/gui/frame_timer.h"
#include "app/gui/screenshot.h"
#include "app/gui/soak.h"
#include "core/base/error.h"
#include "core/models/assets.h"
#include "core/render/png_export.h"
#include "core/tensor/memory_reuse.h"

#include <CLI/CLI.hpp>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

// --bench-recompute paces frames as a 60 Hz display does.
constexpr std::chrono::microseconds display_refresh{16667};

// Used when assets/default_sentence.txt cannot be read (an app copied elsewhere).
constexpr const char* fallback_sentence = "The cat sat on the mat because the cat was tired .";

std::string default_sentence() {
    std::ifstream in(headscope::assets_dir() / "default_sentence.txt");
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) return line;
    return fallback_sentence;
}

// GLFW reports errors through a callback; print them, one line each.
void print_glfw_error(int code, const char* description) {
    std::fprintf(stderr, "headscope: GLFW error %d: %s\n", code, description);
}

void on_drop(GLFWwindow* window, int count, const char** paths) {
    auto* app = static_cast<headscope::gui::AppWindow*>(glfwGetWindowUserPointer(window));
    if (app && count > 0) app->on_drop(paths[0]);
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

}   // namespace

int main(int argc, char** argv) {
    using namespace headscope;
    keep_freed_heap();
    gui::AppState state;
    // A first launch opens on the trained text model (assets/models/tiny-story), whose
    // heads were learned, on a sentence that says a phrase twice: its induction head shows.
    state.model.name = "builtin:tiny-story";
    state.text = default_sentence();
    state.image_path = (assets_dir() / "shapes.png").string();
    std::string screenshot_path;
    std::string colormap_name = "viridis";
    std::string view = "matrix";
    std::string size = "1280x800";
    std::string disable;

    CLI::App cli("Headscope: see what every attention head attends to", "headscope");
    cli.add_option("--model", state.model.name,
                   "builtin:tiny-story, builtin:tiny-shapes, builtin:toy-text, builtin:toy-vit, or a Hugging Face "
                   "checkpoint folder "
                   "(config.json + model.safetensors)")
        ->capture_default_str();
    auto* text_option = cli.add_option("--text", state.text, "The sentence to show (text models)");
    std::string tokens;
    cli.add_option("--tokens", tokens,
                   "Token ids, comma-separated: for a text checkpoint without tokenizer files (typed in the same box)")
        ->excludes(text_option);
    cli.add_option("--image", state.image_path, "The image to show (image models)");
    bool causal = false;
    cli.add_flag("--causal", causal, "Start with the causal mask on (GPT-2 has it on anyway)");
    bool own_resolution = false;
    cli.add_flag("--own-resolution", own_resolution,
                 "Image checkpoints: run the picture at its own size, position embeddings interpolated (DINO-style)");
    cli.add_option("--layer", state.layer, "Selected layer")->check(CLI::Range(0, 63));
    cli.add_option("--head", state.head, "Selected head")->check(CLI::Range(0, 255));
    cli.add_option("--query", state.query, "Pinned query position (image view: the patch, 0 = [CLS])");
    cli.add_option("--disable", disable, "Heads to ablate, as LAYER.HEAD pairs, e.g. 0.1,1.0");
    cli.add_option("--view", view, "matrix, tokens, image, model, compare, stages, heads, rollout or similarity")
        ->capture_default_str()
        ->check(CLI::IsMember(
            {"matrix", "tokens", "image", "model", "compare", "stages", "heads", "rollout", "similarity"}));
    std::string metric;
    std::vector<std::string> metric_names;
    for (int k = 0; k < metric_count; ++k) metric_names.emplace_back(metric_name(static_cast<Metric>(k)));
    cli.add_option("--metric", metric, "The metric the Heads view plots and the Model grid colours or sorts by")
        ->check(CLI::IsMember(metric_names));
    cli.add_flag("--colour-by-metric", state.grid_colour_by_metric,
                 "Model view: frame each head in its --metric colour");
    cli.add_flag("--sort-by-metric", state.grid_sort_by_metric, "Model view: order each layer's heads by --metric");
    float keep_mass_percent = 0.0f;
    cli.add_option("--keep-mass", keep_mass_percent,
                   "Image view: outline the fewest patches holding this percentage of each map's attention (DINO)")
        ->check(CLI::Range(1.0f, 99.0f));
    bool scan_importance = false;
    cli.add_flag("--scan-importance", scan_importance,
                 "Start the head-importance scan (each head disabled alone) once the first result is in");
    cli.add_option("--seed", state.model.config.seed, "Seed of the demo model's weights and embeddings");
    cli.add_option("--colormap", colormap_name, "viridis, magma, cividis or greys")
        ->check(CLI::IsMember({"viridis", "magma", "cividis", "greys"}));
    cli.add_option("--size", size, "Window size WIDTHxHEIGHT")->capture_default_str();
    cli.add_option("--screenshot", screenshot_path,
                   "Render once the result is ready, write the window to this PNG and exit");
    double screenshot_after = 0.0;
    cli.add_option("--screenshot-after", screenshot_after,
                   "With --screenshot: stay interactive (visible, taking input) for this many seconds first")
        ->check(CLI::Range(0.0, 600.0));
    int soak_actions = 0;
    cli.add_option("--soak", soak_actions,
                   "Test: once the first model is in, perform N seeded-random actions (typing, heads, masks, views, "
                   "good and bad files and models), then exit; non-zero on a hang, a NaN on screen or growing memory")
        ->check(CLI::Range(1, 1000000));
    std::uint64_t soak_seed = 1;
    cli.add_option("--soak-seed", soak_seed, "The seed of --soak's actions")->capture_default_str();
    int bench_frames = 0;
    cli.add_option("--bench-frames", bench_frames,
                   "Once the first result is shown, time N frames (CPU, swap excluded), print one line and exit")
        ->check(CLI::Range(1, 1000000));
    bool bench_recompute = false;
    cli.add_flag("--bench-recompute", bench_recompute,
                 "With --bench-frames: keep the worker recomputing (head 0.0 switched off and on again each time "
                 "a result is in) and time whole frames, swap included, paced as by a 60 Hz display: the frame "
                 "rate while recomputing")
        ->needs(cli.get_option("--bench-frames"));
    int width = 0;
    int height = 0;
    try {
        cli.parse(argc, argv);
        if (std::sscanf(size.c_str(), "%dx%d", &width, &height) != 2 || width < 320 || height < 240 || width > 8192 ||
            height > 8192) {
            throw CLI::ValidationError("--size", "expected WIDTHxHEIGHT, e.g. 1600x1000 (320x240 .. 8192x8192)");
        }
        if (soak_actions > 0 && !screenshot_path.empty()) {
            throw CLI::ValidationError("--soak", "cannot be used with --screenshot");
        }
        if (bench_frames > 0 && (soak_actions > 0 || !screenshot_path.empty())) {
            throw CLI::ValidationError("--bench-frames", "cannot be used with --soak or --screenshot");
        }
        if (!disable.empty()) {
            // Sized to the model once it loads (fit_to_model keeps flags that fit).
            for (const auto& [l, h] : app::parse_layer_head_list("--disable", disable)) {
                if (state.disabled_heads.size() <= static_cast<std::size_t>(l))
                    state.disabled_heads.resize(static_cast<std::size_t>(l) + 1);
                auto& layer = state.disabled_heads[static_cast<std::size_t>(l)];
                if (layer.size() <= static_cast<std::size_t>(h)) layer.resize(static_cast<std::size_t>(h) + 1, false);
                layer[static_cast<std::size_t>(h)] = true;
            }
        }
    } catch (const CLI::CallForHelp& e) {
        return cli.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "headscope: %s (see headscope --help)\n", e.what());
        return 2;
    } catch (const Error& e) {
        std::fprintf(stderr, "headscope: %s\n", e.what());
        return 2;
    }
    if (cli.count("--tokens") > 0) state.text = tokens;
    if (cli.count("--image") > 0) gui::choose_picture(state, state.image_path);
    gui::suit_demo_picture(state);
    if (causal) state.causal = true;
    state.own_resolution = own_resolution;
    state.colormap = colormap_from_name(colormap_name).value_or(Colormap::viridis);
    state.view = gui::view_from_name(view).value_or(gui::View::matrix);
    if (keep_mass_percent > 0.0f) {
        state.keep_mass = true;
        state.keep_mass_share = keep_mass_percent / 100.0f;
    }
    if (!metric.empty()) state.metric = metric_from_name(metric).value_or(Metric::prev_token);
    const bool screenshot_mode = !screenshot_path.empty();
    const bool bench_mode = bench_frames > 0;

    glfwSetErrorCallback(print_glfw_error);
    if (!glfwInit()) {
        std::fprintf(stderr, "headscope: cannot open a window (no display? run under xvfb-run for headless use)\n");
        return 1;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    if (screenshot_mode && screenshot_after <= 0.0) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow* window = glfwCreateWindow(width, height, "Headscope", nullptr, nullptr);
    if (!window) {
        std::fprintf(stderr, "headscope: cannot create an OpenGL 3.0 window\n");
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval((screenshot_mode && screenshot_after <= 0.0) || soak_actions > 0 || bench_mode ? 0 : 1);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;   // the layout is fixed; nothing to persist yet
    ImGui::StyleColorsDark();
    // HiDPI: scale text and spacing by the monitor's content scale.
    float scale_x = 1.0f;
    float scale_y = 1.0f;
    glfwGetWindowContentScale(window, &scale_x, &scale_y);
    const float scale = std::max(1.0f, std::max(scale_x, scale_y));
    ImGui::GetStyle().ScaleAllSizes(scale);
    load_font(scale);
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 130");

    int exit_code = 0;
    // A soak run keeps its recent list apart from the user's (it opens many bad files),
    // with the hostile files it makes.
    const std::filesystem::path soak_config =
        std::filesystem::temp_directory_path() / ("headscope-soak-" + std::to_string(getpid()));
    {
        gui::AppWindow app(state, soak_actions > 0 ? (soak_config / "recent.txt").string() : gui::recent_file_path());
        if (scan_importance) app.scan_importance_when_ready();
        // Without --layer / --head, land on the head that does something nameable.
        if (cli.count("--layer") == 0 && cli.count("--head") == 0) app.select_showcase_head_when_ready();
        gui::StartChoices choices;
        if (cli.count("--layer") > 0) choices.layer = state.layer;
        if (cli.count("--head") > 0) choices.head = state.head;
        if (cli.count("--query") > 0) choices.query = state.query;
        if (!disable.empty()) choices.disabled = app::parse_layer_head_list("--disable", disable);
        choices.text_given = cli.count("--text") > 0 || cli.count("--tokens") > 0;
        choices.image_given = cli.count("--image") > 0;
        app.check_start_choices_when_ready(std::move(choices));
        glfwSetWindowUserPointer(window, &app);
        glfwSetDropCallback(window, on_drop);
        std::optional<gui::SoakDriver> soak;
        if (soak_actions > 0) {
            // The test files are beside assets/ in the source tree (tests/images, tests/checkpoints).
            const std::filesystem::path root = (assets_dir() / "..").lexically_normal();
            soak.emplace(app, gui::SoakOptions{soak_actions, soak_seed, root, soak_config});
        }
        // Capture a few frames after the result is ready: ImGui settles its layout.
        int frames_since_ready = 0;
        // A window at rest sleeps: redrawing an unchanged picture at 60 fps takes CPU the
        // model needs (with software rendering, most of two cores). After input or a result
        // it draws a few frames (ImGui settles hover and layout over two or three), then
        // waits for the next event, the worker's wake-up, or a timeout that refreshes
        // progress bars while something computes (one frame).
        // Screenshots too: the worker computes at idle priority (worker.cpp), and a loop that
        // never sleeps would leave it only what the rasteriser does not take. The soak and
        // the frame benchmark draw every frame on purpose.
        const bool sleeps_when_still = soak_actions == 0 && !bench_mode;
        if (sleeps_when_still) app.set_wake([] { glfwPostEmptyEvent(); });
        int frames_before_sleep = 3;
        // --bench-frames: the frames after the same settling are timed.
        gui::FrameTimer frame_timer;
        bool timing = false;
        int recomputes = 0;   // --bench-recompute: requests made while timing
        // The previous frame's busy time, swap included (the rasterising, under llvmpipe):
        // how much of the next one may go to rebuilding textures.
        std::chrono::steady_clock::duration previous_frame{};
        try {
            for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
                if (!screenshot_mode && !soak && !bench_mode && glfwGetWindowAttrib(window, GLFW_ICONIFIED)) {
                    glfwWaitEvents();   // sleep while minimised
                    continue;
                }
                if (sleeps_when_still && frames_before_sleep <= 0 && app.still()) {
                    const double timeout = app.working() ? 0.1 : 0.5;
                    const double slept_from = glfwGetTime();
                    glfwWaitEventsTimeout(timeout);
                    // Woken early: input or a result, worth a few frames. Timed out: one.
                    frames_before_sleep = glfwGetTime() - slept_from < timeout ? 3 : 1;
                }
                const bool timed_frame = timing;   // timing may begin halfway through this frame
                const auto frame_start = std::chrono::steady_clock::now();
                if (timed_frame) frame_timer.start();
                glfwPollEvents();
                app.update();

                ImGui_ImplOpenGL3_NewFrame();
                ImGui_ImplGlfw_NewFrame();
                ImGui::NewFrame();
                app.draw(previous_frame);
                ImGui::Render();

                int fb_width = 0;
                int fb_height = 0;
                glfwGetFramebufferSize(window, &fb_width, &fb_height);
                glViewport(0, 0, fb_width, fb_height);
                // The main window draws no background (app_window.cpp): the clear is its colour.
                const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
                glClearColor(background.x, background.y, background.z, 1.0f);
                glClear(GL_COLOR_BUFFER_BIT);
                ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
                if (timed_frame && !bench_recompute) frame_timer.stop();
                // --soak: the next action once this frame is drawn; done: closed as by the user.
                if (soak && soak->after_frame()) glfwSetWindowShouldClose(window, GLFW_TRUE);

                frames_since_ready = app.settled() ? frames_since_ready + 1 : 0;
                frames_before_sleep = app.still() ? frames_before_sleep - 1 : 3;
                if (bench_mode && timing && frame_timer.count() >= bench_frames) {
                    std::string line = frame_timer.summary(view, std::nullopt);
                    if (bench_recompute) {
                        line = gui::while_recomputing(line, recomputes, frame_timer.max_ms());
                    }
                    std::printf("%s\n", line.c_str());
                    break;
                }
                // --bench-recompute: as soon as a result is in, ask for the next one.
                if (bench_recompute && timing && app.settled()) {
                    app.toggle_head(0, 0);
                    ++recomputes;
                }
                if (bench_mode && !timing && frames_since_ready >= 3) {
                    // Timing an error message would measure the wrong screen.
                    if (!app.error().empty()) {
                        std::fprintf(stderr, "headscope: %s\n", app.error().c_str());
                        exit_code = 2;
                        break;
                    }
                    timing = true;
                } else if (bench_mode && !timing && glfwGetTime() > 600.0) {   // never hang a benchmark
                    std::fprintf(stderr, "headscope: the result was not ready after %d frames (600 s)\n", frame);
                    exit_code = 2;
                    break;
                }
                const bool waited = glfwGetTime() >= screenshot_after;
                const bool gave_up = glfwGetTime() > screenshot_after + 60.0;   // never hang a test
                if (screenshot_mode && waited && (frames_since_ready >= 3 || gave_up)) {
                    try {
                        write_png(screenshot_path, gui::capture_framebuffer(fb_width, fb_height));
                        if (!app.error().empty()) {
                            std::fprintf(stderr, "headscope: %s\n", app.error().c_str());
                            exit_code = 2;
                        }
                        if (frames_since_ready < 3) {
                            std::fprintf(stderr, "headscope: the result was not ready after %d frames (60 s)\n", frame);
                            exit_code = 2;
                        }
                    } catch (const Error& e) {
                        std::fprintf(stderr, "headscope: %s\n", e.what());
                        exit_code = 2;
                    }
                    break;
                }
                glfwSwapBuffers(window);
                previous_frame = std::chrono::steady_clock::now() - frame_start;
                if (timed_frame && bench_recompute) frame_timer.stop();
                // --bench-recompute: at most 60 frames a second, as a display's vertical sync
                // paces them (the sleep is not timed). Back to back, the window and the
                // rasteriser took both cores and the worker (at idle priority) got almost
                // nothing: a ViT-B/16 result did not land in 300 frames, so the frames after
                // a result, which rebuild textures, went unmeasured.
                if (bench_recompute) std::this_thread::sleep_until(frame_start + display_refresh);
            }
        } catch (const std::exception& e) {
            if (!soak) throw;
            soak->fail_with_exception(e.what());
        } catch (...) {
            if (!soak) throw;
            soak->fail_with_exception("(not a std::exception)");
        }
        if (soak) exit_code = soak->finish();
        glfwSetWindowUserPointer(window, nullptr);
    }   // textures are released while the GL context still exists
    if (soak_actions > 0) {
        std::error_code ec;
        std::filesystem::remove_all(soak_config, ec);
    }

    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return exit_code;
}
