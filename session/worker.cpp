#include "session/worker.h"

#include "core/base/error.h"
#include "session/idle_priority.h"

#include <algorithm>
#include <exception>
#include <new>
#include <utility>

namespace headscope::session {

Worker::Worker(ModelLoader loader, std::chrono::milliseconds maps_wait, MemoryReserve reserve)
    : loader_(std::move(loader)), maps_wait_(maps_wait), reserve_(std::move(reserve)), thread_([this] { run(); }) {}

Worker::~Worker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        if (loading_choice_) cancel_.store(true);   // a long load would hold up closing the window
    }
    cancel_.notify_all();
    wake_.notify_all();
    thread_.join();
}

std::uint64_t Worker::submit(Request request) {
    std::uint64_t generation;
    {
        std::lock_guard lock(mutex_);
        generation = next_generation_++;
        // The newest request wins: a load for another model, or the computation of an
        // older request, is no longer wanted.
        if ((loading_choice_ && !(*loading_choice_ == request.model)) || computing_) cancel_.store(true);
        pending_.emplace(generation, std::move(request));
    }
    cancel_.notify_all();
    wake_.notify_all();
    return generation;
}

void Worker::dispose(std::shared_ptr<const Snapshot> old) {
    if (!old) return;
    {
        std::lock_guard lock(mutex_);
        disposed_.push_back(std::move(old));
    }
    wake_.notify_all();
}

std::shared_ptr<const Snapshot> Worker::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

std::pair<std::uint64_t, std::string> Worker::latest_error() const {
    std::lock_guard lock(mutex_);
    return {answer_.generation, answer_.error};
}

Answer Worker::latest_answer() const {
    std::lock_guard lock(mutex_);
    return answer_;
}

bool Worker::busy() const {
    std::lock_guard lock(mutex_);
    return running_ || pending_.has_value();
}

std::uint64_t Worker::answered() const {
    std::lock_guard lock(mutex_);
    return answered_;
}

std::optional<LoadProgress> Worker::loading() const {
    std::lock_guard lock(mutex_);
    if (!loading_choice_) return std::nullopt;
    return progress_;
}

void Worker::cancel_load() {
    {
        std::lock_guard lock(mutex_);
        if (loading_choice_) cancel_.store(true);
    }
    cancel_.notify_all();   // for a loader that waits on the flag (std::atomic::wait)
}

std::optional<ComputeProgress> Worker::computing() const {
    std::lock_guard lock(mutex_);
    return computing_;
}

void Worker::cancel_compute() {
    {
        std::lock_guard lock(mutex_);
        if (computing_) cancel_.store(true);
    }
    wake_.notify_all();   // a run waiting for its maps to be drawn stops waiting
}

std::optional<ModelChoice> Worker::model_in_use() const {
    std::lock_guard lock(mutex_);
    return model_in_use_;
}

std::optional<ModelInfo> Worker::model_in_use_info() const {
    std::lock_guard lock(mutex_);
    return model_in_use_info_;
}

void Worker::run() {
    compute_at_idle_priority();
    ModelSession session;
    while (std::optional<std::pair<std::uint64_t, Request>> job = next_job()) {
        const std::uint64_t generation = job->first;
        const Request& request = job->second;
        std::shared_ptr<Snapshot> snapshot;
        Answer answer{generation, Failure::none, {}, request.model};
        bool in_load = false;
        try {
            if (!session.holds(request.model)) {
                in_load = true;
                session.adopt(load(request.model), request.model);
                in_load = false;
                reserved_for_ = 0;   // the last model's result sizes say nothing of this one's
                std::lock_guard lock(mutex_);
                reserve_wanted_ = 0;
            }
            snapshot = compute(session, request, generation);
        } catch (...) {
            answer = failed(std::current_exception(), generation, request.model, in_load);
        }
        publish(std::move(answer), std::move(snapshot));
    }
}

std::optional<std::pair<std::uint64_t, Request>> Worker::next_job() {
    for (;;) {
        std::vector<std::shared_ptr<const Snapshot>> done;   // results the window let go of
        std::optional<std::pair<std::uint64_t, Request>> job;
        std::size_t reserve_bytes = 0;
        {
            std::unique_lock lock(mutex_);
            const auto has_work = [this] { return stop_ || pending_.has_value() || !disposed_.empty(); };
            if (reserve_wanted_ == 0) {
                wake_.wait(lock, has_work);
            } else if (!wake_.wait_for(lock, reserve_after, has_work)) {
                // Rested: the window let go of what it showed before.
                reserve_bytes = std::exchange(reserve_wanted_, 0);
            }
            if (stop_) return std::nullopt;
            done.swap(disposed_);
            if (pending_.has_value()) {
                job = std::move(pending_);
                pending_.reset();
                running_ = true;
            }
        }
        done.clear();   // freed here, outside the lock, not on the window's thread
        if (job) return job;
        if (reserve_bytes > 0) reserve_memory(reserve_bytes);
    }
}

void Worker::reserve_memory(std::size_t bytes) {
    if (!reserve_) return;
    // A few milliseconds a step; a new request stops it after the step under way.
    bool stopped = false;
    try {
        (void)reserve_(bytes, [&] {
            std::lock_guard lock(mutex_);
            stopped = stop_ || pending_.has_value();
            return stopped;
        });
    } catch (...) {
        return;   // advice to the heap, nothing the window needs: the next run faults its memory in
    }
    if (!stopped) reserved_for_ = bytes;
}

std::shared_ptr<Snapshot> Worker::compute(ModelSession& session, const Request& request, std::uint64_t generation) {
    {
        std::lock_guard lock(mutex_);
        computing_ = ComputeProgress{};
        // A newer request may already be waiting: then stop at the first layer.
        cancel_.store(pending_.has_value());
    }
    ComputeControl control;
    control.cancel = &cancel_;
    control.on_progress = [this](const ComputeProgress& progress) {
        std::function<void()> notify;
        {
            std::lock_guard lock(mutex_);
            computing_ = progress;
            notify = on_progress_;
        }
        if (notify) notify();   // the window redraws its progress line
    };
    control.on_maps = [this](std::shared_ptr<const Snapshot> maps_only) { publish_maps(std::move(maps_only)); };
    std::shared_ptr<Snapshot> snapshot;
    try {
        snapshot = session.compute(request, generation, control);
    } catch (...) {
        std::lock_guard lock(mutex_);
        computing_.reset();
        throw;
    }
    std::lock_guard lock(mutex_);
    computing_.reset();
    return snapshot;
}

std::unique_ptr<Model> Worker::load(const ModelChoice& choice) {
    {
        std::lock_guard lock(mutex_);
        loading_choice_ = choice;
        progress_ = {choice.name, 0.0};
        // A request for another model may already be waiting: then stop at once.
        cancel_.store(pending_.has_value() && !(pending_->second.model == choice));
    }
    LoadControl control;
    control.cancel = &cancel_;
    control.on_progress = [this](double fraction) {
        std::lock_guard lock(mutex_);
        progress_.fraction = fraction;
    };
    std::unique_ptr<Model> loaded;
    try {
        loaded = loader_(choice, control);
    } catch (...) {
        std::lock_guard lock(mutex_);
        loading_choice_.reset();
        throw;
    }
    // Only now is the previous model let go (by the caller): a failed or stopped load keeps it.
    ModelInfo info = loaded->info();
    std::lock_guard lock(mutex_);
    loading_choice_.reset();
    model_in_use_ = choice;
    model_in_use_info_ = std::move(info);
    return loaded;
}

Answer Worker::failed(std::exception_ptr error, std::uint64_t generation, const ModelChoice& model, bool in_load) {
    Answer answer{generation, in_load ? Failure::load : Failure::compute, {}, model};
    try {
        std::rethrow_exception(error);
    } catch (const LoadCancelled& e) {
        answer.failure = Failure::load_cancelled;
        answer.error = e.what();
    } catch (const ComputeCancelled& e) {
        answer.failure = Failure::compute_cancelled;
        answer.error = e.what();
    } catch (const Error& e) {
        answer.error = e.what();
    } catch (const std::bad_alloc&) {
        answer.error = in_load ? model.name + ": out of memory while loading the model"
                               : "out of memory: the input is too large for this machine";
    } catch (const std::exception& e) {
        // A bug, not bad input: still a line on screen rather than std::terminate.
        answer.error = std::string("internal error: ") + e.what();
    }
    return answer;
}

void Worker::publish(Answer answer, std::shared_ptr<Snapshot> snapshot) {
    std::function<void()> notify;
    {
        std::lock_guard lock(mutex_);
        running_ = false;
        answered_ = answer.generation;
        // A run whose maps went up before its numbers, and then failed (out of memory in
        // the metrics): its maps stay, no longer said to be waiting for anything.
        if (!snapshot && latest_ && latest_->numbers_pending && latest_->generation == answer.generation) {
            auto maps_only = std::make_shared<Snapshot>(*latest_);   // shares the run
            maps_only->numbers_pending = false;
            latest_ = std::move(maps_only);
        }
        answer_ = std::move(answer);
        if (snapshot) {
            const auto bytes = static_cast<std::size_t>(snapshot->kept_bytes());
            reserve_wanted_ = bytes >= least_reserve && bytes > reserved_for_ + reserved_for_ / 8 ? bytes : 0;
            latest_ = std::move(snapshot);
        }
        notify = on_answer_;
    }
    if (notify) notify();
}

void Worker::maps_on_screen(std::uint64_t generation) {
    {
        std::lock_guard lock(mutex_);
        maps_on_screen_ = std::max(maps_on_screen_, generation);
    }
    wake_.notify_all();
}

void Worker::publish_maps(std::shared_ptr<const Snapshot> maps_only) {
    // The result goes up now; the request stays unanswered (busy) until its numbers are in.
    const std::uint64_t generation = maps_only->generation;
    std::function<void()> notify;
    {
        std::lock_guard lock(mutex_);
        latest_ = std::move(maps_only);
        computing_ = ComputeProgress{};
        computing_->run = "the logits, the heads' metrics and the output change";
        notify = on_answer_;
    }
    if (notify) notify();
    // The numbers wait until the window's frame has made and uploaded the maps' textures:
    // the numbers' first step (copying the kept rows' logits, hundreds of MB) took the
    // memory bandwidth those need, idle priority or not (docs/performance.md). Not past a
    // limit: a minimised window draws nothing, and a Worker may have no window at all.
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, maps_wait_,
                   [&] { return stop_ || pending_.has_value() || cancel_.load() || maps_on_screen_ >= generation; });
}

void Worker::set_on_progress(std::function<void()> notify) {
    std::lock_guard lock(mutex_);
    on_progress_ = std::move(notify);
}

void Worker::set_on_answer(std::function<void()> notify) {
    std::lock_guard lock(mutex_);
    on_answer_ = std::move(notify);
}

}   // namespace headscope::session
