#include "app/gui/worker.h"

#include "core/error.h"
#include "core/model_registry.h"

#include <chrono>
#include <new>

namespace headscope::gui {

bool ModelChoice::operator==(const ModelChoice& o) const {
    const ToyConfig& a = config;
    const ToyConfig& b = o.config;
    return name == o.name && a.width == b.width && a.n_heads == b.n_heads && a.n_layers == b.n_layers &&
           a.mlp_ratio == b.mlp_ratio && a.max_tokens == b.max_tokens && a.image_size == b.image_size &&
           a.patch_size == b.patch_size && a.bias == b.bias && a.seed == b.seed && a.init == b.init;
}

Worker::Worker() : thread_([this] { run(); }) {}

Worker::~Worker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

std::uint64_t Worker::submit(Request request) {
    std::uint64_t generation;
    {
        std::lock_guard lock(mutex_);
        generation = next_generation_++;
        pending_.emplace(generation, std::move(request));
    }
    wake_.notify_all();
    return generation;
}

std::shared_ptr<const Snapshot> Worker::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

std::pair<std::uint64_t, std::string> Worker::latest_error() const {
    std::lock_guard lock(mutex_);
    return error_;
}

bool Worker::busy() const {
    std::lock_guard lock(mutex_);
    return running_ || pending_.has_value();
}

std::uint64_t Worker::answered() const {
    std::lock_guard lock(mutex_);
    return answered_;
}

void Worker::run() {
    // The model is kept between requests while its choice does not change.
    std::unique_ptr<Model> model;
    std::optional<ModelChoice> model_choice;
    for (;;) {
        std::pair<std::uint64_t, Request> job;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
            if (stop_) return;
            job = std::move(*pending_);
            pending_.reset();
            running_ = true;
        }
        const auto& [generation, request] = job;
        const auto start = std::chrono::steady_clock::now();
        std::shared_ptr<Snapshot> snapshot;
        std::string error;
        try {
            if (!model || model_choice != request.model) {
                model_choice.reset();
                model = open_model(request.model.name, request.model.config);
                model_choice = request.model;
            }
            snapshot = std::make_shared<Snapshot>();
            snapshot->generation = generation;
            snapshot->info = model->info();
            if (snapshot->info.takes_image) {
                const RgbImage image = decode_image_file(request.image_path);
                const int side = snapshot->info.image_size;
                snapshot->image = (image.width == side && image.height == side)
                                      ? image
                                      : resize_image(image, side, side, Resample::bilinear);
                snapshot->input = model->encode_image(image);
            } else {
                snapshot->input = model->encode_text(request.text);
            }
            RunOptions options;
            options.causal = request.causal;
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
            options.detail = TraceDetail::all_stages;
            snapshot->trace = model->forward(snapshot->input, options);
            if (request.also_flip_causal) {
                options.causal = !request.causal;
                snapshot->flipped = model->forward(snapshot->input, options);
            }
            snapshot->compute_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        } catch (const Error& e) {
            error = e.what();
            snapshot.reset();
        } catch (const std::bad_alloc&) {
            error = "out of memory: the input is too large for this machine";
            snapshot.reset();
        }
        std::lock_guard lock(mutex_);
        running_ = false;
        answered_ = generation;
        if (snapshot) {
            latest_ = std::move(snapshot);
            error_ = {generation, {}};
        } else {
            error_ = {generation, error};
        }
    }
}

} // namespace headscope::gui
