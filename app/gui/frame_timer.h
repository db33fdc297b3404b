#pragma once
// `headscope --bench-frames N`: the CPU time of each frame, from polling events to the
// draw data handed to OpenGL (the swap left out: it waits on the display, or on vsync,
// not on our code), and the one-line summary the run prints. No window here, so the
// statistics and the line are tested without one.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::gui {

class FrameTimer {
public:
    using Clock = std::chrono::steady_clock;

    // Around one frame: start() before glfwPollEvents, stop() after
    // ImGui_ImplOpenGL3_RenderDrawData, before glfwSwapBuffers.
    void start() { started_ = Clock::now(); }
    void stop();
    // One frame's time in milliseconds, as stop() records it (tests give their own).
    void add(double ms) { samples_ms_.push_back(ms); }

    int count() const { return static_cast<int>(samples_ms_.size()); }
    // 0 when there are no samples.
    double mean_ms() const;
    double max_ms() const;
    // Nearest rank: the smallest sample that at least 95% of the samples do not exceed.
    double p95_ms() const;

    // "headscope: bench-frames: 200 frames, view model, T=197, mean 3.12 ms, max 5.40 ms,
    // p95 4.80 ms (CPU per frame, swap excluded)"; T is left out when not known.
    std::string summary(std::string_view view, std::optional<long> tokens) const;

private:
    Clock::time_point started_{};
    std::vector<double> samples_ms_;
};

// --bench-recompute: the summary line (whose times then include the swap), with how many
// recomputes ran during the frames and the lowest frame rate: "..., 41 recomputes, lowest
// 52.3 fps (slowest frame 19.1 ms)".
std::string while_recomputing(const std::string& summary, int recomputes, double max_ms);

}   // namespace headscope::gui
