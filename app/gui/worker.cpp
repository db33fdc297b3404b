#include "app/gui/worker.h"

#include "app/common/arg_lists.h"
#include "core/base/error.h"
#include "core/models/model_registry.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>

namespace headscope::gui {

namespace {

// What a trace depends on besides the model (a new model empties the caches) and the
// disabled heads: the embeddings themselves, not the path they came from (a picture
// rewritten on disk under the same name is another input), and the mask.
struct RunKey {
    Matrix embeddings;
    bool causal = false;
    std::vector<std::pair<int, int>> forbidden;
    bool operator==(const RunKey& other) const {
        return causal == other.causal && forbidden == other.forbidden && embeddings.rows() == other.embeddings.rows() &&
               embeddings.cols() == other.embeddings.cols() && embeddings == other.embeddings;
    }
};

// FNV-1a over bytes, continuing from `hash`.
std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = 14695981039346656037ull) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
}

// A short text naming the model and the run key, for the window's analysis caches.
std::string input_key_text(const ModelChoice& model, const RunKey& key) {
    const ToyConfig& c = model.config;
    const std::int64_t numbers[] = {c.width,
                                    c.n_heads,
                                    c.n_layers,
                                    c.mlp_ratio,
                                    c.max_tokens,
                                    c.image_size,
                                    c.patch_size,
                                    c.bias,
                                    static_cast<std::int64_t>(c.seed),
                                    static_cast<std::int64_t>(c.init),
                                    static_cast<std::int64_t>(c.arch),
                                    key.causal,
                                    key.embeddings.rows(),
                                    key.embeddings.cols()};
    std::uint64_t hash = fnv1a(numbers, sizeof numbers);
    hash = fnv1a(key.embeddings.data(), static_cast<std::size_t>(key.embeddings.size()) * sizeof(float), hash);
    for (const auto& pair : key.forbidden) hash = fnv1a(&pair, sizeof pair, hash);
    char text[24];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return model.name + " " + text;
}

// The first layer whose disabled heads differ between two sets of flags ([L][H] or
// empty = none disabled); n_layers when none differs.
Eigen::Index first_changed_layer(const std::vector<std::vector<bool>>& a, const std::vector<std::vector<bool>>& b,
                                 Eigen::Index n_layers) {
    const auto off = [](const std::vector<std::vector<bool>>& flags, std::size_t l, std::size_t h) {
        return l < flags.size() && h < flags[l].size() && flags[l][h];
    };
    for (Eigen::Index l = 0; l < n_layers; ++l) {
        const std::size_t n =
            std::max(a.size() > static_cast<std::size_t>(l) ? a[static_cast<std::size_t>(l)].size() : 0,
                     b.size() > static_cast<std::size_t>(l) ? b[static_cast<std::size_t>(l)].size() : 0);
        for (std::size_t h = 0; h < n; ++h) {
            if (off(a, static_cast<std::size_t>(l), h) != off(b, static_cast<std::size_t>(l), h)) return l;
        }
    }
    return n_layers;
}

}   // namespace

std::vector<std::int64_t> token_ids_typed(const std::string& text) {
    // Each item trimmed, so that an error quotes what was typed ("The cat", not "Thecat").
    std::string list;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::size_t first = text.find_first_not_of(" \t\r\n", start);
        const std::size_t last = text.find_last_not_of(" \t\r\n", comma == 0 ? 0 : comma - 1);
        if (first < comma && last != std::string::npos && last >= first) list += text.substr(first, last - first + 1);
        if (comma == text.size()) break;
        list += ',';
        start = comma + 1;
    }
    return app::parse_index_list("token ids (the checkpoint has no tokenizer files)", list, "464,3797,3332");
}

bool any_disabled(const std::vector<std::vector<bool>>& disabled) {
    for (const auto& layer : disabled) {
        for (const bool off : layer) {
            if (off) return true;
        }
    }
    return false;
}

bool ModelChoice::operator==(const ModelChoice& o) const {
    const ToyConfig& a = config;
    const ToyConfig& b = o.config;
    return name == o.name && a.width == b.width && a.n_heads == b.n_heads && a.n_layers == b.n_layers &&
           a.mlp_ratio == b.mlp_ratio && a.max_tokens == b.max_tokens && a.image_size == b.image_size &&
           a.patch_size == b.patch_size && a.bias == b.bias && a.seed == b.seed && a.init == b.init && a.arch == b.arch;
}

std::unique_ptr<Model> open_model_choice(const ModelChoice& choice, const LoadControl& control) {
    return open_model(choice.name, choice.config, control);
}

Worker::Worker(ModelLoader loader) : loader_(std::move(loader)), thread_([this] { run(); }) {}

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
        // The newest request wins: a load for another model is no longer wanted.
        if (loading_choice_ && !(*loading_choice_ == request.model)) cancel_.store(true);
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

std::optional<ModelChoice> Worker::model_in_use() const {
    std::lock_guard lock(mutex_);
    return model_in_use_;
}

void Worker::run() {
    // Computing yields to drawing: the forward runs on every core (core/tensor/parallel.h), and
    // the window must keep 30 fps meanwhile. SCHED_IDLE, not a nice value: a thread of the
    // window that wakes preempts it at once, where nice 10 still let a frame wait behind
    // it (software rendering: slowest frame 48 ms at nice 10, 28-33 ms idle; see
    // docs/performance.md). The threads this one starts for a forward inherit the policy.
    // The cost: other busy programs on the machine come first as well.
    sched_param idle{};
    (void)::sched_setscheduler(0, SCHED_IDLE, &idle);
    // The model is kept between requests while its choice does not change; so are the
    // labels of its logit columns, the intact run of the last ablated input, and the last
    // run (to resume when only the disabled heads of later layers changed).
    std::shared_ptr<const Model> model;
    std::optional<ModelChoice> held;   // what `model` was opened as
    std::shared_ptr<const std::vector<std::string>> output_labels;
    std::optional<RunKey> intact_key;
    std::shared_ptr<const ModelTrace> intact_trace;
    std::optional<RunKey> last_key;
    std::shared_ptr<const Snapshot> last_run;
    for (;;) {
        std::pair<std::uint64_t, Request> job;
        std::vector<std::shared_ptr<const Snapshot>> done;   // results the window let go of
        bool has_job = false;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || pending_.has_value() || !disposed_.empty(); });
            if (stop_) return;
            done.swap(disposed_);
            if (pending_.has_value()) {
                has_job = true;
                job = std::move(*pending_);
                pending_.reset();
                running_ = true;
            }
        }
        done.clear();   // freed here, outside the lock, not on the window's thread
        if (!has_job) continue;
        // Named references, not a structured binding: clang 14 cannot capture those in lambdas.
        const auto& generation = job.first;
        const Request& request = job.second;
        auto start = std::chrono::steady_clock::now();
        std::shared_ptr<Snapshot> snapshot;
        Answer answer{generation, Failure::none, {}, request.model};
        bool in_load = false;
        try {
            if (!model || !held || !(*held == request.model)) {
                in_load = true;
                {
                    std::lock_guard lock(mutex_);
                    loading_choice_ = request.model;
                    progress_ = {request.model.name, 0.0};
                    // A request for another model may already be waiting: then stop at once.
                    cancel_.store(pending_.has_value() && !(pending_->second.model == request.model));
                }
                LoadControl control;
                control.cancel = &cancel_;
                control.on_progress = [this](double fraction) {
                    std::lock_guard lock(mutex_);
                    progress_.fraction = fraction;
                };
                std::unique_ptr<Model> loaded;
                try {
                    loaded = loader_(request.model, control);
                } catch (...) {
                    std::lock_guard lock(mutex_);
                    loading_choice_.reset();
                    throw;
                }
                // Only now is the previous model let go: a failed or stopped load keeps it.
                model = std::move(loaded);
                held = request.model;
                output_labels.reset();
                intact_key.reset();
                intact_trace.reset();
                last_key.reset();
                last_run.reset();
                std::lock_guard lock(mutex_);
                loading_choice_.reset();
                model_in_use_ = request.model;
                in_load = false;
                start = std::chrono::steady_clock::now();   // compute_ms leaves the load out
            }
            snapshot = std::make_shared<Snapshot>();
            snapshot->generation = generation;
            snapshot->model = request.model;
            snapshot->model_ref = model;
            snapshot->info = model->info();
            const auto encode = [&](const std::string& text, const std::string& image_path) {
                if (snapshot->info.reads_ids_only) return model->encode_ids(token_ids_typed(text));
                if (!snapshot->info.takes_image) return model->encode_text(text);
                ImageOptions image_options;
                image_options.own_resolution = request.own_resolution;
                return model->encode_image(decode_image_file(image_path), image_options);
            };
            snapshot->input = encode(request.text, request.image_path);
            snapshot->image = snapshot->input.pixels;
            check_maps_fit_in_memory(snapshot->info, snapshot->input.embeddings.rows());
            RunOptions options;
            snapshot->causal = request.causal.value_or(snapshot->info.causal);
            options.causal = snapshot->causal;
            if (!request.forbidden.empty()) {
                const Eigen::Index T = snapshot->input.embeddings.rows();
                Mask keep = Mask::Constant(T, T, true);
                for (const auto& [i, j] : request.forbidden) {
                    if (i < T && j < T) keep(i, j) = false;
                }
                options.keep = std::move(keep);
            }
            // Flags for another model's shape (just switched) are ignored, not an error.
            if (static_cast<Eigen::Index>(request.disabled_heads.size()) == snapshot->info.n_layers &&
                (request.disabled_heads.empty() ||
                 static_cast<Eigen::Index>(request.disabled_heads[0].size()) == snapshot->info.n_heads)) {
                options.disabled_heads = request.disabled_heads;
            }
            snapshot->ablated = any_disabled(options.disabled_heads);
            // Every stage of one layer, when the Stages view shows it; the maps only elsewhere.
            if (request.stages_layer && *request.stages_layer >= 0 && *request.stages_layer < snapshot->info.n_layers) {
                options.stages_layer = *request.stages_layer;
            }
            snapshot->options = options;
            options.keep_layer_inputs = true;
            RunKey key{snapshot->input.embeddings, snapshot->causal, request.forbidden};
            snapshot->input_key = input_key_text(request.model, key);
            // Toggling a head redoes only its layer and those after it.
            if (last_run && last_key && *last_key == key &&
                static_cast<Eigen::Index>(last_run->trace.layer_inputs.size()) == snapshot->info.n_layers) {
                Eigen::Index first = first_changed_layer(last_run->options.disabled_heads, options.disabled_heads,
                                                         snapshot->info.n_layers);
                // A layer whose stages were kept, or now are, changes too.
                const Eigen::Index had = last_run->options.stages_layer;
                if (had != options.stages_layer) {
                    for (const Eigen::Index l : {had, options.stages_layer}) {
                        if (l >= 0) first = std::min(first, l);
                    }
                }
                options.resume_from = &last_run->trace;
                options.resume_layer = std::min(first, snapshot->info.n_layers - 1);
                snapshot->resumed_at = options.resume_layer;
            } else if (last_run && last_key && snapshot->causal && last_key->causal && request.forbidden.empty() &&
                       last_key->forbidden.empty() && last_run->options.disabled_heads == options.disabled_heads &&
                       last_run->options.stages_layer == options.stages_layer &&
                       static_cast<Eigen::Index>(last_run->trace.layer_inputs.size()) == snapshot->info.n_layers) {
                // Text typed or edited at its end, on a causal model: the positions before
                // the first changed one are the last run's (GPT-2 computes only the rest).
                const Matrix& now = snapshot->input.embeddings;
                const Matrix& before = last_key->embeddings;
                Eigen::Index same = 0;
                while (same < now.rows() && same < before.rows() && now.cols() == before.cols() &&
                       now.row(same) == before.row(same)) {
                    ++same;
                }
                if (same > 0 && same < now.rows()) {
                    options.prefix_from = &last_run->trace;
                    options.prefix_rows = same;
                    snapshot->reused_positions = same;
                }
            }
            snapshot->trace = model->forward(snapshot->input, options);
            options.resume_from = nullptr;
            options.prefix_from = nullptr;
            options.keep_layer_inputs = false;
            options.stages_layer = -1;   // the runs below show maps only
            const Matrix& logits = snapshot->trace.logits;
            if (logits.size() != 0) {
                if (!output_labels || static_cast<Eigen::Index>(output_labels->size()) != logits.cols()) {
                    auto labels = std::make_shared<std::vector<std::string>>();
                    labels->reserve(static_cast<std::size_t>(logits.cols()));
                    for (Eigen::Index i = 0; i < logits.cols(); ++i) labels->push_back(model->output_label(i));
                    output_labels = std::move(labels);
                }
                snapshot->output_labels = output_labels;
            }
            if (snapshot->ablated) {
                // What the disabled heads change: the same input and mask with every head
                // on, run once and kept while only the choice of disabled heads changes.
                if (!intact_trace || !intact_key || !(*intact_key == key)) {
                    RunOptions intact = options;
                    intact.disabled_heads.clear();
                    intact_trace = std::make_shared<const ModelTrace>(model->forward(snapshot->input, intact));
                    intact_key = key;
                }
                snapshot->intact = intact_trace;
                snapshot->effect = output_change(*intact_trace, snapshot->trace);
                if (logits.size() != 0)
                    snapshot->intact_logits = std::shared_ptr<const Matrix>(intact_trace, &intact_trace->logits);
            }
            if (request.also_flip_causal) {
                options.causal = !snapshot->causal;
                snapshot->flipped = model->forward(snapshot->input, options);
            }
            // Layers before the resumed one have the maps of the last run: so do their metrics.
            const auto reused = static_cast<std::size_t>(snapshot->resumed_at * snapshot->info.n_heads);
            if (reused > 0 && last_run->metrics.size() >= reused) {
                snapshot->metrics.assign(last_run->metrics.begin(),
                                         last_run->metrics.begin() + static_cast<std::ptrdiff_t>(reused));
            }
            const std::vector<HeadMetrics> computed =
                compute_model_metrics(snapshot->trace, metric_context(snapshot->input, snapshot->info),
                                      snapshot->metrics.empty() ? 0 : static_cast<std::size_t>(snapshot->resumed_at));
            snapshot->metrics.insert(snapshot->metrics.end(), computed.begin(), computed.end());
            if (!request.compare_text.empty() || !request.compare_image_path.empty()) {
                // Input B failing (a bad file, too long) is the compare view's to report,
                // not an error of the main input.
                try {
                    ModelInput other = encode(request.compare_text, request.compare_image_path);
                    check_maps_fit_in_memory(snapshot->info, other.embeddings.rows());
                    RunOptions other_options = options;
                    other_options.causal = snapshot->causal;
                    other_options.keep.reset();   // the custom mask belongs to input A's positions
                    snapshot->other_trace = model->forward(other, other_options);
                    snapshot->other_input = std::move(other);
                } catch (const Error& e) {
                    snapshot->other_error = e.what();
                }
            }
            last_key = std::move(key);
            last_run = snapshot;
            snapshot->compute_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        } catch (const LoadCancelled& e) {
            answer.failure = Failure::load_cancelled;
            answer.error = e.what();
            snapshot.reset();
        } catch (const Error& e) {
            answer.failure = in_load ? Failure::load : Failure::compute;
            answer.error = e.what();
            snapshot.reset();
        } catch (const std::bad_alloc&) {
            answer.failure = in_load ? Failure::load : Failure::compute;
            answer.error = in_load ? request.model.name + ": out of memory while loading the model"
                                   : "out of memory: the input is too large for this machine";
            snapshot.reset();
        } catch (const std::exception& e) {
            // A bug, not bad input: still a line on screen rather than std::terminate.
            answer.failure = in_load ? Failure::load : Failure::compute;
            answer.error = std::string("internal error: ") + e.what();
            snapshot.reset();
        }
        std::function<void()> notify;
        {
            std::lock_guard lock(mutex_);
            running_ = false;
            answered_ = generation;
            answer_ = std::move(answer);
            if (snapshot) latest_ = std::move(snapshot);
            notify = on_answer_;
        }
        if (notify) notify();
    }
}

void Worker::set_on_answer(std::function<void()> notify) {
    std::lock_guard lock(mutex_);
    on_answer_ = std::move(notify);
}

}   // namespace headscope::gui
