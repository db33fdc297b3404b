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

#include "core/analysis/ablation_effects.h"
#include "core/analysis/head_metrics.h"
#include "core/base/load_control.h"
#include "core/image/image.h"
#include "core/models/model.h"
#include "core/models/toy/toy_models.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace headscope::gui {

struct ModelChoice {
    std::string name = "builtin:toy-text";   // a built-in name or a checkpoint folder
    ToyConfig config;                        // built-in models only
    bool operator==(const ModelChoice& other) const;
};

// Opens the model a choice names; checkpoint folders report progress to `control`
// and throw LoadCancelled when it says stop.
using ModelLoader = std::function<std::unique_ptr<Model>(const ModelChoice&, const LoadControl&)>;
std::unique_ptr<Model> open_model_choice(const ModelChoice& choice, const LoadControl& control);

struct Request {
    ModelChoice model;
    std::string text;
    std::string image_path;
    bool own_resolution = false;                     // image checkpoints: at the picture's own size (ImageOptions)
    std::optional<bool> causal;                      // the causal mask; unset: the model's own default
    std::vector<std::vector<bool>> disabled_heads;   // [L][H] or empty
    bool also_flip_causal = false;                   // also run with the causal mask flipped (compare view)
    // The mask editor's forbidden (query, key) pairs; pairs past the input's length are ignored.
    std::vector<std::pair<int, int>> forbidden;
    // Compare view, input A vs input B: also run this second sentence (text models) or
    // picture (image models) with the same model and options. Empty: not asked.
    std::string compare_text;
    std::string compare_image_path;
    // The layer whose every stage (q, k, v, scores, ...) to keep, for the Stages view;
    // unset: the maps only, a third of the memory.
    std::optional<int> stages_layer;
    bool operator==(const Request& other) const = default;
};

// A text box's token ids, for a checkpoint without tokenizer files: comma-separated
// whole numbers, spaces and line breaks around them ignored ("464, 3797, 3332").
std::vector<std::int64_t> token_ids_typed(const std::string& text);

// Whether any head is switched off in [L][H] flags (empty: none).
bool any_disabled(const std::vector<std::vector<bool>>& disabled);

// One finished computation; never changed after it is published.
struct Snapshot {
    std::uint64_t generation = 0;   // of the request it answers
    ModelChoice model;              // the model that computed it
    // The model itself, for analysis that runs it again off the UI thread (the
    // importance scan); shared, so it outlives a switch to another model.
    std::shared_ptr<const Model> model_ref;
    RunOptions options;   // how `trace` ran (causal, mask, disabled heads)
    // Names the model and everything the trace depends on but the disabled heads (the
    // embeddings, causal, the custom mask), hashed: the window keys analysis by it.
    std::string input_key;
    ModelInfo info;
    ModelInput input;
    ModelTrace trace;
    bool causal = false;                 // whether trace ran with the causal mask
    bool ablated = false;                // whether some head was disabled in trace
    std::optional<ModelTrace> flipped;   // the same input with the causal mask flipped, when asked
    std::vector<HeadMetrics> metrics;    // [L * H] of trace, layer-major (core/analysis/head_metrics.h)
    // When heads are disabled: the same input and mask with every head on (its maps for
    // the compare view, its output for the effect below). Null otherwise.
    std::shared_ptr<const ModelTrace> intact;
    std::optional<OutputChange> effect;   // how far the disabled heads moved the output
    // Compare view, input B (Request::compare_text / compare_image_path): its input and
    // run, or why it failed.
    std::optional<ModelInput> other_input;
    std::optional<ModelTrace> other_trace;
    std::string other_error;
    Eigen::Index resumed_at = 0;         // the first layer computed; earlier ones were reused from the last run
    Eigen::Index reused_positions = 0;   // positions copied from the last run (text typed at the end, causal models)
    RgbImage image;                      // image models: the picture as the model saw it (input.pixels)
    double compute_ms = 0.0;             // the computation, without loading the model
    // When heads are disabled and the model has a head: intact's logits [T, V] (or
    // [1, labels]), computed once per model, input and mask. Null otherwise.
    std::shared_ptr<const Matrix> intact_logits;
    // What each logit column means (Model::output_label), [V]; one table per loaded model,
    // shared by its snapshots; null when the model has no head.
    std::shared_ptr<const std::vector<std::string>> output_labels;
};

// A model load in progress.
struct LoadProgress {
    std::string name;        // as the request named it
    double fraction = 0.0;   // 0..1 of the weight bytes read
};

// How the newest answered request ended.
enum class Failure { none, compute, load, load_cancelled };

struct Answer {
    std::uint64_t generation = 0;
    Failure failure = Failure::none;
    std::string error;   // one line; empty when it succeeded
    ModelChoice model;   // the model the request asked for
};

class Worker {
public:
    explicit Worker(ModelLoader loader = open_model_choice);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // Queues `request` (replacing any not yet started) and returns its generation. A
    // model load in progress for another model than the request's is stopped.
    std::uint64_t submit(Request request);

    // The newest successful result, or null before the first.
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
    // The model the worker holds (the last one that loaded), if any.
    std::optional<ModelChoice> model_in_use() const;
    // Called on the worker's thread each time a request is answered: the window's loop
    // sleeps while nothing changes, and this wakes it (glfwPostEmptyEvent).
    void set_on_answer(std::function<void()> notify);

private:
    void run();

    const ModelLoader loader_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<std::pair<std::uint64_t, Request>> pending_;
    std::vector<std::shared_ptr<const Snapshot>> disposed_;   // freed on the worker thread
    bool running_ = false;
    bool stop_ = false;
    std::uint64_t next_generation_ = 1;
    std::uint64_t answered_ = 0;
    std::shared_ptr<const Snapshot> latest_;
    Answer answer_;
    std::optional<ModelChoice> model_in_use_;
    std::optional<ModelChoice> loading_choice_;   // set while a load runs
    LoadProgress progress_;
    std::function<void()> on_answer_;
    std::atomic<bool> cancel_{false};   // read by the loader between tensors; notified when set
    std::thread thread_;                // last: started once everything above exists
};

}   // namespace headscope::gui
