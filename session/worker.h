#pragma once
// The background computation of DESIGN.md's "Live computation": the UI submits what
// the user chose; one worker thread runs the latest request only (a newer one
// supersedes an older one still waiting), and publishes an immutable Snapshot that
// the UI swaps in at frame start. The UI thread never waits on the model.
//
// Loading a checkpoint happens on the worker too, with its progress readable from the
// UI (loading()) and a stop request (cancel_load(), or a newer request for another
// model). A load that fails or is stopped keeps the model the worker had, so the views
// of the previous model stay valid.

#include "core/base/load_control.h"
#include "core/tensor/memory_reuse.h"
#include "session/model_session.h"
#include "session/request.h"
#include "session/snapshot.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace headscope::session {

// A model load in progress.
struct LoadProgress {
    std::string name;        // as the request named it
    double fraction = 0.0;   // 0..1 of the weight bytes read
};

// How the newest answered request ended.
enum class Failure { none, compute, compute_cancelled, load, load_cancelled };

struct Answer {
    std::uint64_t generation = 0;
    Failure failure = Failure::none;
    std::string error;   // one line; empty when it succeeded
    ModelChoice model;   // the model the request asked for
};

class Worker {
public:
    // How long a run's numbers wait at most for the window to draw its maps (publish_maps),
    // from when they go up: a frame under way then (100-250 ms under software rendering at
    // T = 1,000), and the next, which waits up to 100 ms for their textures (ui/app_window.cpp).
    static constexpr std::chrono::milliseconds default_maps_wait{300};

    // How long the worker rests after a result before it makes sure the heap holds freed
    // memory for the next run (reserve_freed_memory): by then the window has let go of the
    // result it showed before, whose memory the next run reuses.
    static constexpr std::chrono::milliseconds reserve_after{500};
    // Results smaller than this are not worth it: their runs fault in their memory quickly.
    static constexpr std::size_t least_reserve = std::size_t{64} << 20;

    // How the worker tops the heap's free memory up (reserve_freed_memory: bytes wanted, and
    // whether to stop); a test watches it through its own.
    using MemoryReserve = std::function<std::size_t(std::size_t bytes, const std::function<bool()>& stop)>;

    explicit Worker(ModelLoader loader = open_model_choice, std::chrono::milliseconds maps_wait = default_maps_wait,
                    MemoryReserve reserve = reserve_freed_memory);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // Queues `request` (replacing any not yet started) and returns its generation. A
    // model load in progress for another model than the request's is stopped.
    std::uint64_t submit(Request request);

    // The newest successful result, or null before the first. A long run's maps come
    // first, before the numbers read from them (Snapshot::numbers_pending), while busy().
    std::shared_ptr<const Snapshot> latest() const;
    // The error of the newest request, if it failed (empty otherwise), and its generation.
    std::pair<std::uint64_t, std::string> latest_error() const;
    // The newest request's outcome, with why it failed.
    Answer latest_answer() const;
    // True while a request is queued or running.
    bool busy() const;
    // The generation of the last request answered (with a result or an error).
    std::uint64_t answered() const;

    // The model load in progress, if any.
    std::optional<LoadProgress> loading() const;
    // Stops the model load in progress (no effect when none is): its request is answered
    // with Failure::load_cancelled and the worker keeps the model it had.
    void cancel_load();
    // Lets the worker thread free a result the window no longer shows: a GPT-2 run at
    // 1024 tokens holds gigabytes, and giving them back to the kernel took the window's
    // thread a visible pause.
    void dispose(std::shared_ptr<const Snapshot> old);
    // The window's frame made and uploaded the textures of the maps of `generation` (a
    // result whose numbers are pending): the worker, which waits for this after putting the
    // maps up, goes on to the numbers.
    void maps_on_screen(std::uint64_t generation);
    // The computation in progress (which run, layer k of L), if any.
    std::optional<ComputeProgress> computing() const;
    // Stops the computation in progress (no effect when none is): its request is answered
    // with Failure::compute_cancelled, and the last result stays the newest. A newer
    // request stops the one computing too: only the newest is wanted.
    void cancel_compute();
    // The model the worker holds (the last one that loaded), if any.
    std::optional<ModelChoice> model_in_use() const;
    // What that model is (read once it loaded, before its first result is in).
    std::optional<ModelInfo> model_in_use_info() const;
    // Called on the worker's thread each time a request is answered: the window's loop
    // sleeps while nothing changes, and this wakes it (glfwPostEmptyEvent).
    void set_on_answer(std::function<void()> notify);
    // Called on the worker's thread after each layer of a computation (computing()
    // changed): the window redraws its progress line.
    void set_on_progress(std::function<void()> notify);

private:
    void run();
    // The next request to compute (freeing disposed results, and reserving memory for the
    // next run, while waiting); none once stopping.
    std::optional<std::pair<std::uint64_t, Request>> next_job();
    // Tops the heap's free memory up to `bytes` (reserve_), until a request comes.
    void reserve_memory(std::size_t bytes);
    // Computes `request` with its progress readable and the stop flag armed.
    std::shared_ptr<Snapshot> compute(ModelSession& session, const Request& request, std::uint64_t generation);
    // Opens `choice` with its progress readable and the stop flag armed.
    std::unique_ptr<Model> load(const ModelChoice& choice);
    static Answer failed(std::exception_ptr error, std::uint64_t generation, const ModelChoice& model, bool in_load);
    void publish(Answer answer, std::shared_ptr<Snapshot> snapshot);
    // A long run's maps, before its numbers (ComputeControl::on_maps); returns once the
    // window drew them, or after maps_wait_, or on a newer request or a Cancel.
    void publish_maps(std::shared_ptr<const Snapshot> maps_only);

    const ModelLoader loader_;
    const std::chrono::milliseconds maps_wait_;
    const MemoryReserve reserve_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<std::pair<std::uint64_t, Request>> pending_;
    std::vector<std::shared_ptr<const Snapshot>> disposed_;   // freed on the worker thread
    bool running_ = false;
    bool stop_ = false;
    std::uint64_t next_generation_ = 1;
    std::uint64_t answered_ = 0;
    std::uint64_t maps_on_screen_ = 0;   // the generation whose maps the window drew last
    // The bytes of the last result, for which the heap should hold freed memory once the
    // worker rests (0: nothing to do): the next run is computed while that one is shown.
    std::size_t reserve_wanted_ = 0;
    // The size of result the heap was last topped up for, since the model loaded (worker
    // thread only). Results no bigger find the memory freed by those before them (each
    // edit's run frees the one shown before the last), so only the first result, and one
    // that outgrows it by an eighth, ask: asking after every result would take memory that
    // something else holds for a moment (an analysis job) and grow the heap past what it keeps.
    std::size_t reserved_for_ = 0;
    std::shared_ptr<const Snapshot> latest_;
    Answer answer_;
    std::optional<ModelChoice> model_in_use_;
    std::optional<ModelInfo> model_in_use_info_;
    std::optional<ModelChoice> loading_choice_;   // set while a load runs
    LoadProgress progress_;
    std::optional<ComputeProgress> computing_;   // set while a computation runs
    std::function<void()> on_answer_;
    std::function<void()> on_progress_;
    // Read by the loader between tensors and by a computation between layers; notified when set.
    std::atomic<bool> cancel_{false};
    std::thread thread_;   // last: started once everything above exists
};

}   // namespace headscope::session
