#pragma once
// `headscope-test-window --soak N` (the window's test build, harness_main.cpp): a
// scripted user. Once the first model is on screen it performs N seeded-random actions
// (typing, heads and masks, layers and views, good and bad files and models), one every frame or two, through the same
// AppState transitions and AppWindow entry points the controls and the drop callback use; every action is drawn by the
// normal render loop for at least one frame. It fails (a non-zero exit code and a line on stderr) on a hang, on a NaN
// in what is shown, and on memory that keeps growing; it ends with a one-line summary on stdout. The action list is in
// soak.cpp.

#include "ui/app_window.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace headscope::gui {

struct SoakOptions {
    int n_actions = 0;
    std::uint64_t seed = 1;
    // Where the good and bad test files are: the repository root (tests/images,
    // tests/checkpoints, assets). Missing files are simply more bad input.
    std::filesystem::path root;
    // A folder of the run's own (removed by the caller) for hostile files made on the spot:
    // a named pipe called *.png, which blocks whoever opens it to read.
    std::filesystem::path scratch;
};

// The files the actions open, found once at the start.
struct SoakFiles {
    std::vector<std::string> good_images;   // assets/*.png, assets/scenes/*.png, tests/images/*.png
    std::vector<std::string> bad_images;    // tests/images/broken/*, a named pipe
    std::vector<std::string> good_models;   // tests/checkpoints/* (not bad/)
    std::vector<std::string> bad_models;    // tests/checkpoints/bad/*
    std::vector<std::string> not_files;     // a folder that is no model, a missing path, a text file
};
SoakFiles find_soak_files(const std::filesystem::path& root, const std::filesystem::path& scratch);

// How a soak run failed: the exit codes main returns.
enum class SoakFailure { none = 0, hang = 3, not_finite = 4, memory = 5, exception = 6 };

class SoakDriver {
public:
    SoakDriver(ui::AppWindow& app, SoakOptions options);
    ~SoakDriver();   // stops the watchdog
    SoakDriver(const SoakDriver&) = delete;
    SoakDriver& operator=(const SoakDriver&) = delete;

    // Once per frame, after it was drawn: checks what is on screen and performs the next
    // action when it is due. True once the run is over (every action done, or a failure).
    bool after_frame();
    // Prints the summary line (stdout) and returns main's exit code: 0, or SoakFailure.
    int finish();
    // An exception that escaped the frame loop: recorded as a failure with the action.
    void fail_with_exception(const std::string& what);

private:
    enum class Phase { first_model, actions, settle_for_sample, done };

    void perform_next_action();
    void check_shown();
    bool check_hang(bool settled);
    void take_memory_sample();
    void fail(SoakFailure failure, const std::string& message);
    std::string recent_actions() const;
    void watchdog();

    ui::AppWindow& app_;
    SoakOptions options_;
    SoakFiles files_;
    session::AppState initial_;   // the state the run started from: the samples return to it
    std::mt19937_64 random_;
    Phase phase_ = Phase::first_model;
    int done_ = 0;      // actions performed
    int warm_up_ = 0;   // the action after which the first RSS sample is taken
    bool sampled_warm_up_ = false;
    long frames_ = 0;
    int frames_settled_ = 0;
    bool wait_for_result_ = false;   // the current action waits for its result before the next
    int errors_shown_ = 0;
    std::string last_error_;
    std::uint64_t checked_generation_ = 0;
    std::chrono::steady_clock::time_point unsettled_since_;
    bool was_settled_ = true;
    std::chrono::steady_clock::time_point started_;
    double rss_warm_up_mib_ = 0.0;
    double rss_end_mib_ = 0.0;
    SoakFailure failure_ = SoakFailure::none;
    std::deque<std::string> history_;   // the last few actions, for a failure's message

    // The watchdog: the UI thread itself stuck in a frame (no frame for hang_seconds).
    std::atomic<long> heartbeat_{0};
    mutable std::mutex watch_mutex_;
    std::condition_variable watch_wake_;
    std::string current_action_;
    bool stop_watch_ = false;
    std::thread watch_thread_;   // last: started once everything above exists
};

}   // namespace headscope::gui
