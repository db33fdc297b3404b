#pragma once
// The background computation of DESIGN.md's "Live computation": the UI submits what
// the user chose; one worker thread runs the latest request only (a newer one
// supersedes an older one still waiting), and publishes an immutable Snapshot that
// the UI swaps in at frame start. The UI thread never waits on the model.

#include "core/image.h"
#include "core/model.h"
#include "core/toy_models.h"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace headscope::gui {

struct ModelChoice {
    std::string name = "builtin:toy-text";
    ToyConfig config;
    bool operator==(const ModelChoice& other) const;
};

struct Request {
    ModelChoice model;
    std::string text;
    std::string image_path;
    bool causal = false;
    std::vector<std::vector<bool>> disabled_heads;   // [L][H] or empty
    bool also_flip_causal = false;                   // also run with the causal mask flipped (compare view)
    // The mask editor's forbidden (query, key) pairs; pairs past the input's length are ignored.
    std::vector<std::pair<int, int>> forbidden;
    bool operator==(const Request& other) const = default;
};

// One finished computation; never changed after it is published.
struct Snapshot {
    std::uint64_t generation = 0;   // of the request it answers
    ModelInfo info;
    ModelInput input;
    ModelTrace trace;
    std::optional<ModelTrace> flipped;   // the same input with the causal mask flipped, when asked
    RgbImage image;                 // image models: the picture at the model's input size
    double compute_ms = 0.0;
};

class Worker {
public:
    Worker();
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // Queues `request` (replacing any not yet started) and returns its generation.
    std::uint64_t submit(Request request);

    // The newest successful result, or null before the first.
    std::shared_ptr<const Snapshot> latest() const;
    // The error of the newest request, if it failed (empty otherwise), and its generation.
    std::pair<std::uint64_t, std::string> latest_error() const;
    // True while a request is queued or running.
    bool busy() const;
    // The generation of the last request answered (with a result or an error).
    std::uint64_t answered() const;

private:
    void run();

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<std::pair<std::uint64_t, Request>> pending_;
    bool running_ = false;
    bool stop_ = false;
    std::uint64_t next_generation_ = 1;
    std::uint64_t answered_ = 0;
    std::shared_ptr<const Snapshot> latest_;
    std::pair<std::uint64_t, std::string> error_;
    std::thread thread_;   // last: started once everything above exists
};

} // namespace headscope::gui
