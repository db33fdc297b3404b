#pragma once
// Analysis that takes longer than a frame (head similarity over every pair of heads, a
// head-importance scan, rollout over long inputs) runs here, off the UI thread: one
// job at a time on a thread of its own, the newest wanted job only (starting one stops
// the one running), with its progress readable and a Cancel. Finished results are kept
// by key, so the views ask "is there a result for what I show?" every frame for free.
// Results are typed: a job made by job<T>() gives a T, and result<T>() of a key whose
// job gave another type is null, never a T read from something else.

#include "core/base/load_control.h"

#include <any>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace headscope::session {

class BackgroundJobs {
public:
    // Holds a std::shared_ptr<const T> (job<T>()), or nothing when the job gave no result.
    using Work = std::function<std::any(const LoadControl&)>;

    // The work of a job whose result is a T: `make(control)` returns std::shared_ptr<const T>.
    template <typename T, typename Make>
    static Work job(Make make) {
        return [make = std::move(make)](const LoadControl& control) -> std::any {
            std::shared_ptr<const T> made = make(control);
            return made ? std::any(std::move(made)) : std::any();
        };
    }

    BackgroundJobs();
    ~BackgroundJobs();
    BackgroundJobs(const BackgroundJobs&) = delete;
    BackgroundJobs& operator=(const BackgroundJobs&) = delete;

    // Runs `work` under `key` unless that key already has a result, is running or
    // waiting, or failed or was cancelled (views call this every frame: a Cancel must
    // stick until the user asks again with restart()); a job running under another key
    // is stopped.
    void start(const std::string& key, Work work);
    // Runs `work` under `key` even when it has a result or an error (Scan again, Retry).
    void restart(const std::string& key, Work work);
    // Stops the job running or waiting (its key gets no result, and the error "cancelled").
    void cancel();

    // The finished result under `key` when it is a T (job<T>()), or null.
    template <typename T>
    std::shared_ptr<const T> result(const std::string& key) const {
        const std::any found = find(key);
        const auto* typed = std::any_cast<std::shared_ptr<const T>>(&found);
        return typed != nullptr ? *typed : nullptr;
    }
    // The error of the last job run under `key` (empty when none failed).
    std::string error(const std::string& key) const;
    // The key running or waiting, and its progress (0..1); nullopt when idle.
    std::optional<std::pair<std::string, double>> running() const;
    bool busy() const { return running().has_value(); }
    // Stops any job and drops every kept result and error (a new model: their keys no
    // longer mean anything, and a job still running for the old one must not land).
    void forget_results();

private:
    std::any find(const std::string& key) const;
    void run();

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<std::pair<std::string, Work>> pending_;
    std::string running_key_;   // empty when idle
    double progress_ = 0.0;
    std::map<std::string, std::any> results_;
    std::deque<std::string> result_order_;   // oldest first, for eviction
    std::uint64_t epoch_ = 0;                // forget_results() counts up: a job of an older epoch is dropped
    std::map<std::string, std::string> errors_;
    bool stop_ = false;
    std::atomic<bool> cancel_{false};
    std::thread thread_;   // last: started once everything above exists
};

}   // namespace headscope::session
