#include "app/gui/frame_timer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace headscope::gui {

void FrameTimer::stop() { add(std::chrono::duration<double, std::milli>(Clock::now() - started_).count()); }

double FrameTimer::mean_ms() const {
    if (samples_ms_.empty()) return 0.0;
    double sum = 0.0;
    for (double ms : samples_ms_) sum += ms;
    return sum / static_cast<double>(samples_ms_.size());
}

double FrameTimer::max_ms() const {
    double most = 0.0;
    for (double ms : samples_ms_) most = std::max(most, ms);
    return most;
}

double FrameTimer::p95_ms() const {
    if (samples_ms_.empty()) return 0.0;
    std::vector<double> sorted = samples_ms_;
    std::sort(sorted.begin(), sorted.end());
    // Nearest rank, ceil(0.95 n): with 20 frames the 19th, so one slow frame in 20 is
    // the max, not the p95. The epsilon keeps 0.95 * 100 = 95.000000000000014 at 95.
    const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(sorted.size()) - 1e-9));
    return sorted[std::max<std::size_t>(rank, 1) - 1];
}

std::string FrameTimer::summary(std::string_view view, std::optional<long> tokens) const {
    char tokens_text[32] = "";
    if (tokens) std::snprintf(tokens_text, sizeof tokens_text, ", T=%ld", *tokens);
    char line[256];
    std::snprintf(line, sizeof line,
                  "headscope: bench-frames: %d frames, view %.*s%s, mean %.2f ms, max %.2f ms, p95 %.2f ms "
                  "(CPU per frame, swap excluded)",
                  count(), static_cast<int>(view.size()), view.data(), tokens_text, mean_ms(), max_ms(), p95_ms());
    return line;
}

std::string while_recomputing(const std::string& summary, int recomputes, double max_ms) {
    std::string line = summary;
    const auto swap_note = line.rfind(" (CPU per frame, swap excluded)");
    if (swap_note != std::string::npos) line.erase(swap_note);
    char tail[160];
    std::snprintf(tail, sizeof tail,
                  " (whole frames, swap included), %d recomputes, lowest %.1f fps (slowest frame %.1f ms)", recomputes,
                  max_ms > 0.0 ? 1000.0 / max_ms : 0.0, max_ms);
    return line + tail;
}

}   // namespace headscope::gui
