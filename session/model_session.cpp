#include "session/model_session.h"

#include "core/analysis/head_summary.h"
#include "core/base/error.h"
#include "core/nn/prefix_reuse.h"
#include "core/tensor/parallel.h"
#include "session/attention_kind.h"

#include <algorithm>

#include <chrono>

namespace headscope::session {

void ModelSession::adopt(std::shared_ptr<const Model> model, const ModelChoice& choice) {
    model_ = std::move(model);
    held_ = choice;
    output_labels_.reset();
    intact_key_.reset();
    intact_trace_.reset();
    intact_run_.reset();
    last_key_.reset();
    last_run_.reset();
    generated_ = {};
}

RunOptions ModelSession::options_for(const Request& request, const Snapshot& snapshot) const {
    RunOptions options;
    options.causal = snapshot.causal;
    if (!request.forbidden.empty()) {
        const Eigen::Index T = snapshot.input.embeddings.rows();
        Mask keep = Mask::Constant(T, T, true);
        for (const auto& [i, j] : request.forbidden) {
            if (i < T && j < T) keep(i, j) = false;
        }
        options.keep = std::move(keep);
    }
    // Flags for another model's shape (just switched) are ignored, not an error.
    const ModelInfo& info = snapshot.info;
    if (request.disabled_heads.layers() == info.n_layers && request.disabled_heads.heads() == info.n_heads)
        options.disabled_heads = request.disabled_heads;
    if (info.encoder_decoder && request.disabled_encoder_heads.layers() == info.encoder_layers &&
        request.disabled_encoder_heads.heads() == info.n_heads)
        options.disabled_encoder_heads = request.disabled_encoder_heads;
    if (info.encoder_decoder && request.disabled_cross_heads.layers() == info.n_layers &&
        request.disabled_cross_heads.heads() == info.n_heads)
        options.disabled_cross_heads = request.disabled_cross_heads;
    // Every stage of one layer, when the Stages view shows it; the maps only elsewhere.
    // (an encoder-decoder's encoder may have more layers than its decoder: its kind's layer)
    const Eigen::Index layers = info.encoder_decoder ? std::max(info.n_layers, info.encoder_layers) : info.n_layers;
    if (request.stages_layer && *request.stages_layer >= 0 && *request.stages_layer < layers) {
        options.stages_layer = *request.stages_layer;
    }
    return options;
}

namespace {

bool cancelled(const ComputeControl& control) {
    return control.cancel != nullptr && control.cancel->load(std::memory_order_relaxed);
}

// Reports each layer of the run named `run` through `control`, and stops the run when asked.
// Each layer done: stop when asked, else report it. The main run of a streamed model
// (`landing`) hands on the thumbnails and metrics landed so far too (copies: the run goes
// on filling the snapshot's).
std::function<void(Eigen::Index, Eigen::Index)> layer_progress(const ComputeControl& control, std::string run,
                                                               const Snapshot* landing = nullptr) {
    return [&control, run = std::move(run), landing](Eigen::Index done, Eigen::Index n) {
        if (cancelled(control)) throw ComputeCancelled();
        if (!control.on_progress) return;
        ComputeProgress progress;
        progress.run = run;
        progress.layers_done = done;
        progress.n_layers = n;
        if (landing != nullptr) {
            const auto landed = static_cast<std::ptrdiff_t>(done * landing->info.n_heads);
            progress.landed_thumbnails = std::make_shared<const std::vector<Matrix>>(
                landing->thumbnails.begin(), landing->thumbnails.begin() + landed);
            progress.landed_metrics = std::make_shared<const std::vector<HeadMetrics>>(
                landing->metrics.begin(), landing->metrics.begin() + landed);
            progress.model = landing->model.name;
        }
        control.on_progress(progress);
    };
}

// The rows of a decoder's logits the run left for after its maps (ModelSession::defers_logits):
// a request for every row whose trace holds fewer. (A classifier's one row is all it has.)
Eigen::Index deferred_logit_rows(const Snapshot& snapshot) {
    const ModelTrace& trace = snapshot.trace;
    if (!snapshot.info.causal || snapshot.info.classifier) return 0;
    if (snapshot.options.last_logit_rows >= 0 || trace.logits.size() == 0) return 0;
    return std::max<Eigen::Index>(0, trace.hidden.rows() - trace.logits.rows());
}

// A language-model head over `rows` positions (a [rows, E] x [E, V] product) in the
// units of ComputeControl::maps_first_above: about 2 x 64 flops to a measured map cell.
double head_work(const ModelInfo& info, Eigen::Index rows) {
    return static_cast<double>(rows) * static_cast<double>(info.n_outputs) * static_cast<double>(info.width) / 64.0;
}

// The head's rows left for after the maps, `rows` of them, of which the first `reused` are
// the last run's (copied: a value copied counted as a map cell measured, both one pass
// over memory) and the others computed.
double deferred_head_work(const ModelInfo& info, Eigen::Index rows, Eigen::Index reused) {
    return head_work(info, rows - reused) + static_cast<double>(reused) * static_cast<double>(info.n_outputs);
}

}   // namespace

std::shared_ptr<Snapshot> ModelSession::compute(const Request& request, std::uint64_t generation,
                                                const ComputeControl& control) {
    // Typed at the end, or the same input again: the shared positions keep their embeddings;
    // the same source and steps, the same greedy decoding (generated_).
    ModelInput input;
    try {
        input = encode_run_input(*model_, request.input, last_run_ ? last_run_->input : ModelInput{}, &generated_,
                                 LoadControl{.on_progress = {}, .cancel = control.cancel});
    } catch (const LoadCancelled&) {
        throw ComputeCancelled();   // a decoding stopped is a computation stopped, not a load
    }
    return compute_on(request, std::move(input), generation, control);
}

std::shared_ptr<Snapshot> ModelSession::compute_on(const Request& request, ModelInput input, std::uint64_t generation,
                                                   const ComputeControl& control) {
    const auto start = std::chrono::steady_clock::now();
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->generation = generation;
    snapshot->model = request.model;
    snapshot->model_ref = model_;
    snapshot->info = model_->info();
    snapshot->input = std::move(input);
    snapshot->image = snapshot->input.pixels;
    const Eigen::Index T = snapshot->input.embeddings.rows();
    snapshot->maps_streamed = control.on_map || streams_maps(request.maps, snapshot->info, T);
    const Eigen::Index logit_rows = request.keeps.logits_when_shown && snapshot->maps_streamed && snapshot->info.causal
                                        ? 1
                                        : request.keeps.logit_rows;
    check_room(*snapshot, logit_rows);
    if (snapshot->maps_streamed) snapshot->shown_maps = std::make_shared<MapCache>(MapCache::default_budget(T));
    snapshot->causal = request.causal.value_or(snapshot->info.causal);
    RunOptions options = options_for(request, *snapshot);
    snapshot->ablated =
        options.disabled_heads.any() || options.disabled_encoder_heads.any() || options.disabled_cross_heads.any();
    options.last_logit_rows = logit_rows;
    snapshot->options = options;
    options.keep_layer_inputs = request.keeps.resumable;
    const RunKey key = run_key(snapshot->input, snapshot->causal, request.forbidden);
    snapshot->input_key = input_key_text(request.model, key);

    // (Not for a caller that takes each map as it is made: a held run makes none.)
    const Snapshot* held = control.on_map ? nullptr : held_answer(*snapshot, key, request);
    if (held != nullptr) {
        // Nothing to compute: the layers are shared with the held run, its logits copied.
        snapshot->trace = held->trace;
        snapshot->metrics = held->metrics;
        snapshot->metric_sums = held->metric_sums;
        snapshot->thumbnails = held->thumbnails;
        snapshot->resumed_at = snapshot->info.n_layers;
    } else {
        run_main(*snapshot, key, request, options, control);
    }
    // The runs below show maps only, from the first layer.
    options.resume_from = nullptr;
    options.prefix_from = nullptr;
    options.keep_layer_inputs = false;
    options.stages_layer = -1;
    if (snapshot->maps_streamed) options.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
    label_outputs(*snapshot);
    if (snapshot->ablated && request.keeps.intact_run) take_intact(*snapshot, key, options, control);
    // A streamed run's metrics landed as it went (but for the Stages view's layer, one
    // layer): measured before the maps go up. A run that kept its maps is measured after.
    const bool measured = held == nullptr && request.keeps.metrics;
    if (measured) reuse_metrics(*snapshot);
    if (measured && snapshot->maps_streamed) measure_heads(*snapshot);
    publish_maps_first(snapshot, request, control, start);
    complete_logits(*snapshot, control);
    if (measured && !snapshot->maps_streamed) measure_heads(*snapshot);
    if (measured) measure_kinds(*snapshot);   // an encoder-decoder's other attentions, off the window's thread
    if (snapshot->intact)
        snapshot->effect = output_change(*snapshot->intact, snapshot->trace, snapshot->info.label_score);
    for (const RunVariant& variant : request.variants) run_variant(*snapshot, variant, options, control);
    if (request.keeps.resumable) {
        last_key_ = std::move(key);
        last_run_ = snapshot;
    }
    snapshot->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return snapshot;
}

void ModelSession::publish_maps_first(std::shared_ptr<Snapshot>& snapshot, const Request& request,
                                      const ComputeControl& control,
                                      std::chrono::steady_clock::time_point start) const {
    // A view that asked for a variant run waits for it: the maps alone would show it nothing.
    if (!control.on_maps || !request.variants.empty()) return;
    const Snapshot& run = *snapshot;
    const auto T = static_cast<double>(run.input.embeddings.rows());
    const Eigen::Index measured_layers =
        request.keeps.metrics && !run.maps_streamed ? run.info.n_layers - run.resumed_at : 0;
    // Text typed at the end: only the maps' new rows are measured (measure_heads).
    const Eigen::Index from_row =
        measured_layers > 0 ? measured_rows_reusable(run, metric_context(run.input, run.info)) : 0;
    const double cells =
        static_cast<double>(measured_layers * run.info.n_heads) * T * (T - static_cast<double>(from_row));
    const double compared = run.intact ? static_cast<double>(run.trace.logits.size() != 0 ? run.trace.logits.size()
                                                                                          : run.trace.hidden.size())
                                       : 0.0;
    const Eigen::Index deferred = deferred_logit_rows(run);
    const double work =
        cells + 1.5 * compared + deferred_head_work(run.info, deferred, std::min(deferred, run.reused_positions));
    if (work == 0.0 || work < control.maps_first_above) return;   // nothing left, or little
    // Moved, not copied, on the way to the screen; the numbers then go into a copy.
    auto maps = std::make_shared<Snapshot>(std::move(*snapshot));
    maps->numbers_pending = true;
    maps->compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    control.on_maps(maps);
    *snapshot = *maps;
    snapshot->numbers_pending = false;
}

void ModelSession::run_main(Snapshot& snapshot, const RunKey& key, const Request& request, RunOptions options,
                            const ComputeControl& control) {
    // A run resumes from one that kept or streamed its maps as this one does.
    // An encoder-decoder computes every layer (a decoder layer reads the encoder, whose heads
    // may have changed too).
    LastRun last;
    if (request.keeps.resumable && last_run_ && last_key_ && last_run_->maps_streamed == snapshot.maps_streamed &&
        !snapshot.info.encoder_decoder)
        last = {&*last_key_, &last_run_->options, &last_run_->trace};
    ReusePlan plan = plan_reuse(last, key, options, snapshot.info.n_layers);
    // A streamed run computes every row, and so does a model that cannot take them (whose
    // head over every position is then left for after the maps, as for any whole run).
    if (snapshot.maps_streamed || !snapshot.info.reuses_prefix) plan.prefix_rows = 0;
    apply_reuse(plan, last, options);
    if (plan.resume) snapshot.resumed_at = plan.resume_layer;

    if (snapshot.maps_streamed) stream_maps(snapshot, request, options, control);
    if (defers_logits(snapshot, request, options, control)) {
        options.last_logit_rows = 1;
        options.other_logit_rows_follow = true;   // complete_logits
    }
    const bool thumbnails_land = snapshot.maps_streamed && !snapshot.thumbnails.empty();
    options.on_layer = layer_progress(control, "", thumbnails_land ? &snapshot : nullptr);
    snapshot.trace = model_->forward(snapshot.input, options);
    snapshot.reused_positions = snapshot.trace.reused_rows;   // what the model took as it was
}

const Snapshot* ModelSession::held_answer(const Snapshot& snapshot, const RunKey& key, const Request& request) const {
    if (snapshot.ablated || !intact_run_ || !intact_key_ || !(*intact_key_ == key)) return nullptr;
    const Snapshot& held = *intact_run_;
    const RunOptions& ran = held.options;
    const RunOptions& asked = snapshot.options;
    const bool same_run = held.maps_streamed == snapshot.maps_streamed && ran.stages_layer == asked.stages_layer &&
                          ran.detail == asked.detail && ran.last_logit_rows == asked.last_logit_rows;
    const bool keeps_enough =
        (!request.keeps.resumable || held.trace.layer_inputs.size() == held.trace.layers.size()) &&
        (!request.keeps.metrics || !held.metrics.empty());
    return same_run && keeps_enough ? &held : nullptr;
}

void ModelSession::check_room(const Snapshot& snapshot, Eigen::Index logit_rows) const {
    // Refused before anything is allocated, with what the run would need.
    const Eigen::Index T = snapshot.input.embeddings.rows();
    if (snapshot.maps_streamed) {
        check_streamed_run_fits(snapshot.info, T, compute_threads(), logit_rows);
    } else {
        check_maps_fit_in_memory(snapshot.info, T);
    }
}

void ModelSession::stream_maps(Snapshot& snapshot, const Request& request, RunOptions& options,
                               const ComputeControl& control) const {
    if (!request.keeps.metrics) {
        // Nothing kept of the maps: the caller's sink alone, or none.
        options.on_map = control.on_map ? control.on_map : [](Eigen::Index, Eigen::Index, const Matrix&) {};
        return;
    }
    // Each map the run makes is reduced on the spot to its metrics and a thumbnail, and let go.
    const auto n = static_cast<std::size_t>(snapshot.info.n_layers * snapshot.info.n_heads);
    snapshot.metrics.resize(n);
    snapshot.thumbnails.resize(n);
    const auto reused = static_cast<std::size_t>(snapshot.resumed_at * snapshot.info.n_heads);
    if (reused > 0 && last_run_ && last_run_->thumbnails.size() == n) {
        std::copy_n(last_run_->metrics.begin(), reused, snapshot.metrics.begin());
        std::copy_n(last_run_->thumbnails.begin(), reused, snapshot.thumbnails.begin());
    }
    const Eigen::Index T = snapshot.input.embeddings.rows();
    auto mask = std::make_shared<const OptionalMask>(
        mask_and(snapshot.causal ? OptionalMask(mask_causal(T, T)) : OptionalMask(), options.keep));
    options.on_map = [&snapshot, mask, sink = control.on_map, context = metric_context(snapshot.input, snapshot.info)](
                         Eigen::Index l, Eigen::Index h, const Matrix& weights) {
        if (sink) sink(l, h, weights);
        HeadSummary summary =
            summarize_head(weights, *mask ? &**mask : nullptr, context, static_cast<int>(l), static_cast<int>(h));
        const auto at = static_cast<std::size_t>(l * snapshot.info.n_heads + h);
        snapshot.metrics[at] = summary.metrics;
        snapshot.thumbnails[at] = std::move(summary.pooled_max);
    };
}

bool ModelSession::defers_logits(const Snapshot& snapshot, const Request& request, const RunOptions& options,
                                 const ComputeControl& control) const {
    // A decoder's head over every position is a product as big as a few layers at T =
    // 1,000 (T x E x V): where the maps go up first, they need not wait for it. The last
    // row, the one the predictions show, comes with them; any other a view asks for before
    // the rest is computed from the final hidden state (Snapshot::logits_row). A run that
    // reuses the positions of the last leaves their rows too: copied, they are still [T, V]
    // (GPT-2's 200 MB at T = 1,000), a pass over memory the maps need not wait for.
    const ModelInfo& info = snapshot.info;
    if (!control.on_maps || !request.variants.empty() || snapshot.maps_streamed) return false;
    if (!info.causal || info.classifier || info.n_outputs == 0) return false;
    if (options.last_logit_rows >= 0) return false;
    // The rows left for later, as publish_maps_first weighs them: all but the last.
    const Eigen::Index rows = snapshot.input.embeddings.rows() - 1;
    const Eigen::Index reused = options.prefix_from != nullptr ? std::min(options.prefix_rows, rows) : 0;
    return deferred_head_work(info, rows, reused) >= control.maps_first_above;
}

void ModelSession::complete_logits(Snapshot& snapshot, const ComputeControl& control) const {
    const Eigen::Index left = deferred_logit_rows(snapshot);
    if (left == 0) return;
    const ModelTrace& trace = snapshot.trace;
    // The positions the run took from the last one have its rows, as the model's own
    // run would have copied them (where that run kept every row).
    const ModelTrace* before = last_run_ ? &last_run_->trace : nullptr;
    const bool before_whole = before != nullptr && before->logits.rows() == before->hidden.rows();
    const Eigen::Index copied = before_whole ? std::min({snapshot.reused_positions, left, before->logits.rows()}) : 0;
    const Eigen::Index kept = trace.logits.rows();
    Matrix computed(left - copied + kept, trace.logits.cols());   // rows `copied` on
    computed.bottomRows(kept) = trace.logits.get();
    // A block of rows at a time: no second [T, V] beside the first, and each block's
    // product still big enough to run at full speed.
    constexpr Eigen::Index block_rows = 256;
    for (Eigen::Index first = copied; first < left; first += block_rows) {
        if (cancelled(control)) throw ComputeCancelled();
        const Eigen::Index n = std::min(block_rows, left - first);
        computed.middleRows(first - copied, n) = model_->logits_rows(trace, first, n);
    }
    if (cancelled(control)) throw ComputeCancelled();
    snapshot.trace.logits = copied > 0 ? stack_rows(before->logits.get(), copied, computed) : std::move(computed);
}

void ModelSession::label_outputs(Snapshot& snapshot) {
    const Matrix& logits = snapshot.trace.logits;
    if (logits.size() == 0) return;
    if (snapshot.info.zero_shot) {   // the labels given with the picture
        snapshot.output_labels = std::make_shared<std::vector<std::string>>(snapshot.input.prompt_names);
        return;
    }
    if (!output_labels_ || static_cast<Eigen::Index>(output_labels_->size()) != logits.cols()) {
        auto labels = std::make_shared<std::vector<std::string>>();
        labels->reserve(static_cast<std::size_t>(logits.cols()));
        for (Eigen::Index i = 0; i < logits.cols(); ++i) labels->push_back(model_->output_label(i));
        output_labels_ = std::move(labels);
    }
    snapshot.output_labels = output_labels_;
}

void ModelSession::take_intact(Snapshot& snapshot, const RunKey& key, RunOptions options,
                               const ComputeControl& control) {
    // What the disabled heads change: the same input and mask with every head on, run
    // once and kept while only the choice of disabled heads changes.
    if (!intact_trace_ || !intact_key_ || !(*intact_key_ == key) || intact_streamed_ != snapshot.maps_streamed) {
        if (last_run_ && !last_run_->ablated && last_key_ && *last_key_ == key &&
            last_run_->maps_streamed == snapshot.maps_streamed) {
            // The run before had every head on, with this input and mask (a head was just
            // switched off): it is the intact run, and a second forward would only repeat it.
            intact_trace_ = std::shared_ptr<const ModelTrace>(last_run_, &last_run_->trace);
            intact_run_ = last_run_;
        } else {
            intact_run_.reset();
            options.disabled_heads = options.disabled_encoder_heads = options.disabled_cross_heads = {};
            options.on_layer = layer_progress(control, "intact");
            intact_trace_ = std::make_shared<const ModelTrace>(model_->forward(snapshot.input, options));
        }
        intact_key_ = key;
        intact_streamed_ = snapshot.maps_streamed;
    }
    snapshot.intact = intact_trace_;
    if (snapshot.trace.logits.size() != 0)
        snapshot.intact_logits = std::shared_ptr<const Matrix>(intact_trace_, &intact_trace_->logits.get());
}

void ModelSession::reuse_metrics(Snapshot& snapshot) const {
    // Layers before the resumed one have the maps of the last run: so do their metrics.
    // (A streamed run copied them as it began: stream_maps.)
    if (snapshot.maps_streamed) return;
    const auto reused = static_cast<std::size_t>(snapshot.resumed_at * snapshot.info.n_heads);
    if (reused > 0 && last_run_ && last_run_->metrics.size() >= reused) {
        snapshot.metrics.assign(last_run_->metrics.begin(),
                                last_run_->metrics.begin() + static_cast<std::ptrdiff_t>(reused));
        if (last_run_->metric_sums.size() >= reused) {
            snapshot.metric_sums.assign(last_run_->metric_sums.begin(),
                                        last_run_->metric_sums.begin() + static_cast<std::ptrdiff_t>(reused));
        }
    }
}

Eigen::Index ModelSession::measured_rows_reusable(const Snapshot& snapshot, const MetricContext& context) const {
    // Text typed or edited at the end: every map's first p rows are the last run's, and so
    // are their totals, if the ids and special positions the metrics read there are too.
    const Eigen::Index p = snapshot.reused_positions;
    const auto heads = static_cast<std::size_t>(snapshot.info.n_layers * snapshot.info.n_heads);
    if (p <= 0 || snapshot.resumed_at != 0 || !last_run_ || last_run_->metric_sums.size() != heads) return 0;
    const MetricContext last = metric_context(last_run_->input, last_run_->info);
    const auto same_first = [p](const auto& a, const auto& b) {
        const auto n = static_cast<std::size_t>(p);
        return (a.empty() && b.empty()) ||
               (a.size() >= n && b.size() >= n && std::equal(a.begin(), a.begin() + p, b.begin()));
    };
    if (!same_first(context.ids, last.ids) || !same_first(context.special, last.special)) return 0;
    for (const HeadMetricSums& head : last_run_->metric_sums) {
        if (head.through(p) == nullptr) return 0;
    }
    return p;
}

void ModelSession::measure_heads(Snapshot& snapshot) const {
    if (snapshot.maps_streamed) {
        // Streamed layers were summarised as they ran; a layer that kept its maps (the
        // Stages view's) is summarised here.
        const MetricContext context = metric_context(snapshot.input, snapshot.info);
        const Mask* mask = snapshot.trace.mask ? &*snapshot.trace.mask : nullptr;
        for (Eigen::Index l = snapshot.resumed_at; l < snapshot.info.n_layers; ++l) {
            const AttentionTrace& layer = snapshot.trace.layers[static_cast<std::size_t>(l)];
            if (streamed(layer)) continue;
            for (Eigen::Index h = 0; h < snapshot.info.n_heads; ++h) {
                HeadSummary summary = summarize_head(layer.heads[static_cast<std::size_t>(h)].weights, mask, context,
                                                     static_cast<int>(l), static_cast<int>(h));
                const auto at = static_cast<std::size_t>(l * snapshot.info.n_heads + h);
                snapshot.metrics[at] = summary.metrics;
                snapshot.thumbnails[at] = std::move(summary.pooled_max);
            }
        }
        return;
    }
    const MetricContext context = metric_context(snapshot.input, snapshot.info);
    const std::size_t first_layer = snapshot.metrics.empty() ? 0 : static_cast<std::size_t>(snapshot.resumed_at);
    const Eigen::Index from_row = measured_rows_reusable(snapshot, context);
    std::vector<HeadMetricSums> sums;
    if (from_row > 0) sums = last_run_->metric_sums;
    const std::vector<HeadMetrics> computed =
        compute_model_metrics(snapshot.trace, context, first_layer, &sums, from_row);
    snapshot.metrics.insert(snapshot.metrics.end(), computed.begin(), computed.end());
    // Whole only when the layers before the measured ones brought theirs.
    if (snapshot.metric_sums.size() == first_layer * static_cast<std::size_t>(snapshot.info.n_heads)) {
        snapshot.metric_sums.insert(snapshot.metric_sums.end(), sums.begin(), sums.end());
    } else {
        snapshot.metric_sums.clear();
    }
}

void ModelSession::run_variant(Snapshot& snapshot, const RunVariant& variant, RunOptions options,
                               const ComputeControl& control) const {
    VariantRun& run = snapshot.variants[variant.name];
    options.causal = variant.flip_causal ? !snapshot.causal : snapshot.causal;
    options.on_layer = layer_progress(control, variant.name);
    // A variant failing (another input that is a bad file, or too long) is its view's to
    // report, not an error of the main input.
    try {
        if (variant.input.empty()) {
            run.trace = model_->forward(snapshot.input, options);
            return;
        }
        ModelInput other = encode_run_input(*model_, variant.input);
        if (snapshot.maps_streamed) {
            check_streamed_run_fits(snapshot.info, other.embeddings.rows(), compute_threads(), options.last_logit_rows);
        } else {
            check_maps_fit_in_memory(snapshot.info, other.embeddings.rows());
        }
        options.keep.reset();   // the custom mask belongs to the main input's positions
        run.trace = model_->forward(other, options);
        run.input = std::move(other);
    } catch (const ComputeCancelled&) {
        throw;
    } catch (const Error& e) {
        run.error = e.what();
    }
}

}   // namespace headscope::session
