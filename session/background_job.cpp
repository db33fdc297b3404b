#include "session/background_job.h"

#include "core/base/error.h"
#include "session/idle_priority.h"

#include <algorithm>
#include <exception>
#include <new>
#include <vector>

namespace headscope::session {

namespace {
// Results kept at most, the oldest dropped first: a rollout at T = 1024 is 4 MB, and a
// session of many inputs should not grow without end.
constexpr std::size_t kept_results = 16;
}   // namespace

BackgroundJobs::BackgroundJobs() : thread_([this] { run(); }) {}

BackgroundJobs::~BackgroundJobs() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        cancel_.store(true);
    }
    wake_.notify_all();
    thread_.join();
}

void BackgroundJobs::start(const std::string& key, Work work) {
    {
        std::lock_guard lock(mutex_);
        if (results_.count(key) != 0 || errors_.count(key) != 0 || running_key_ == key ||
            (pending_ && pending_->first == key)) {
            return;
        }
        if (!running_key_.empty()) cancel_.store(true);   // the newest wanted job wins
        pending_.emplace(key, std::move(work));
    }
    wake_.notify_all();
}

void BackgroundJobs::restart(const std::string& key, Work work) {
    {
        std::lock_guard lock(mutex_);
        results_.erase(key);
        errors_.erase(key);
        std::erase(result_order_, key);
        if (!running_key_.empty()) cancel_.store(true);
        pending_.emplace(key, std::move(work));
    }
    wake_.notify_all();
}

void BackgroundJobs::cancel() {
    std::lock_guard lock(mutex_);
    if (pending_) {
        errors_[pending_->first] = "cancelled";
        pending_.reset();
    }
    if (!running_key_.empty()) cancel_.store(true);
}

std::string BackgroundJobs::error(const std::string& key) const {
    std::lock_guard lock(mutex_);
    const auto found = errors_.find(key);
    return found == errors_.end() ? std::string() : found->second;
}

std::optional<std::pair<std::string, double>> BackgroundJobs::running() const {
    std::lock_guard lock(mutex_);
    if (!running_key_.empty()) return std::pair{running_key_, progress_};
    if (pending_) return std::pair{pending_->first, 0.0};
    return std::nullopt;
}

void BackgroundJobs::forget_results() {
    std::lock_guard lock(mutex_);
    results_.clear();
    result_order_.clear();
    errors_.clear();
    pending_.reset();
    if (!running_key_.empty()) cancel_.store(true);
    ++epoch_;
}

std::any BackgroundJobs::find(const std::string& key) const {
    std::lock_guard lock(mutex_);
    const auto found = results_.find(key);
    return found == results_.end() ? std::any() : found->second;
}

void BackgroundJobs::run() {
    // Behind the window as the worker is: a view's job that starts with a new result (the
    // Matrix view's hover score, a forward of the shown layer on both cores) otherwise took
    // the cores from the frame that draws that result, and put it up 5-10 ms later.
    compute_at_idle_priority();
    for (;;) {
        std::pair<std::string, Work> job;
        std::uint64_t epoch = 0;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
            if (stop_) return;
            job = std::move(*pending_);
            pending_.reset();
            running_key_ = job.first;
            epoch = epoch_;
            progress_ = 0.0;
            cancel_.store(false);
        }
        LoadControl control;
        control.cancel = &cancel_;
        control.on_progress = [this](double fraction) {
            std::lock_guard lock(mutex_);
            progress_ = fraction;
        };
        std::any result;
        std::string error;
        try {
            result = job.second(control);
        } catch (const LoadCancelled&) {
            error = "cancelled";
        } catch (const Error& e) {
            error = e.what();
        } catch (const std::bad_alloc&) {
            error = "out of memory: the input is too large for this analysis";
        } catch (const std::exception& e) {
            error = std::string("internal error: ") + e.what();
        }
        // Results pushed out are freed after the lock (declared before it): this thread runs
        // at idle priority, and the window's thread takes the lock every frame.
        std::vector<std::any> evicted;
        std::lock_guard lock(mutex_);
        running_key_.clear();
        if (epoch != epoch_) continue;   // forgotten while it ran: it belongs to another model
        if (result.has_value()) {
            while (results_.size() >= kept_results && !result_order_.empty()) {
                const auto oldest = results_.find(result_order_.front());
                if (oldest != results_.end()) {
                    evicted.push_back(std::move(oldest->second));
                    results_.erase(oldest);
                }
                result_order_.pop_front();
            }
            results_[job.first] = std::move(result);
            result_order_.push_back(job.first);
        } else {
            errors_[job.first] = error;
        }
    }
}

}   // namespace headscope::session
