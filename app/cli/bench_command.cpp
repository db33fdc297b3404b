// `headscope-cli bench`: how long a model takes to load and to produce every head's
// map, and how much memory it held at most (CLI.md). One JSON object on stdout, so
// scripts (tools/bench_vs_torch.py) can read it. Timings are wall-clock medians and
// minima over --repeat runs after one warm-up run; a run is the input's encoding (token
// or patch embedding) and the forward, from token ids or decoded pixels to the last
// output, so it times what PyTorch's forward does; every map is kept, as the app keeps them,
// or with --on-demand none is: each is reduced to its metrics and thumbnail on the way.

#include "app/cli/command.h"
#include "app/cli/model_args.h"
#include "core/base/error.h"
#include "core/base/memory_room.h"
#include "core/base/seeded_random.h"
#include "core/image/image.h"
#include "core/nn/attention.h"
#include "core/tensor/parallel.h"
#include "core/text/text.h"
#include "core/text/tokenizer/tokenizer_folder.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace headscope::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The process's peak resident set so far (every page it touched: heap and mapped files).
double peak_rss_mb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;   // Linux reports KiB
}

struct Timings {
    double median_ms = 0.0;
    double min_ms = 0.0;
};

// One warm-up call (page faults, first allocations), then `repeat` timed calls.
// `run` once to warm up, then `repeat` times timed, each after `setup` (not timed).
Timings time_runs_between(int repeat, const std::function<void()>& setup, const std::function<void()>& run) {
    setup();
    run();
    std::vector<double> ms;
    for (int i = 0; i < repeat; ++i) {
        setup();
        const auto start = Clock::now();
        run();
        ms.push_back(ms_since(start));
    }
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    return {n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front()};
}

Timings time_runs(int repeat, const std::function<void()>& run) {
    return time_runs_between(
        repeat, [] {}, run);
}

Matrix random_matrix(std::uint64_t stream, Eigen::Index rows, Eigen::Index cols, float scale) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i)
        m.data()[i] = scale * seeded_normal(1, stream, static_cast<std::uint64_t>(i));
    return m;
}

struct BenchArgs {
    ModelArgs model;
    InputArgs input;
    RunArgs run;
    int repeat = 5;
    int threads = compute_threads();   // every core, unless OMP_NUM_THREADS says otherwise
    bool mha = false;
    std::string tokenizer;
    bool incremental = false;
    int appended = 0;
    bool on_demand = false;
    bool as_window = false;
    Eigen::Index T = 0;
    Eigen::Index E = 0;
    Eigen::Index H = 0;
};

void add_bench_options(CLI::App* cmd, BenchArgs& args) {
    add_model_options(cmd, args.model, true);
    add_input_options(cmd, args.input);
    add_run_options(cmd, args.run);
    cmd->add_option("--repeat", args.repeat, "Timed forwards, after one warm-up")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--threads", args.threads, "Threads to compute on (default: every core)")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    cmd->add_flag("--incremental", args.incremental,
                  "With --disable-heads: time the recompute the app does when those heads are switched off: from "
                  "a kept run with every head on, only the first ablated layer and those after it");
    cmd->add_option("--appended", args.appended,
                    "Causal models: time the recompute after the input's last N tokens were typed, from a kept "
                    "run without them (only the new positions are computed)")
        ->check(CLI::Range(1, 1 << 16));
    cmd->add_flag("--as-window", args.as_window,
                  "With --incremental or --appended: also time the same edit as the window's worker makes it (its "
                  "request: metrics, the intact run, the output change, maps kept or streamed by length), from "
                  "the window's run before the edit");
    cmd->add_flag("--on-demand", args.on_demand,
                  "Maps on demand: each head's map reduced to its metrics and a pooled thumbnail as the forward "
                  "makes it, none kept; then time computing single heads' full maps again");
    auto* mha =
        cmd->add_flag("--mha", args.mha, "One self-attention layer with seeded random weights instead of a model");
    cmd->add_option("--T", args.T, "--mha: sequence length")->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--E", args.E, "--mha: model width (at most 8192: 4 x E x E weights)")->check(CLI::Range(1, 8192));
    cmd->add_option("--H", args.H, "--mha: heads (E divisible by H)")->check(CLI::Range(1, 1 << 10));
    mha->excludes(cmd->get_option("--model"));
    cmd->add_option("--tokenizer", args.tokenizer,
                    "A folder's tokenizer instead of a model: time loading it and tokenizing --text / --text-file")
        ->excludes(cmd->get_option("--model"))
        ->excludes(mha);
}

// --mha: one self-attention layer with seeded random weights.
void bench_mha_layer(const BenchArgs& args, nlohmann::ordered_json& out) {
    if (args.T < 1 || args.E < 1 || args.H < 1) throw Error("--mha needs --T, --E and --H");
    if (args.E % args.H != 0) {
        throw Error("--E " + std::to_string(args.E) + " is not divisible by --H " + std::to_string(args.H));
    }
    // Everything the layer will hold, checked before any of it is made: the weights (in_proj
    // and its q, k, v copies, out_proj: 7 E^2), the input and its projections (~8 T E) and
    // the maps with their scores (2 H T^2).
    const double E = static_cast<double>(args.E), T = static_cast<double>(args.T);
    check_memory_room((7.0 * E * E + 8.0 * T * E + 2.0 * static_cast<double>(args.H) * T * T) * sizeof(float),
                      "--mha with --T " + std::to_string(args.T) + " --E " + std::to_string(args.E) + " --H " +
                          std::to_string(args.H),
                      "use a smaller --T or --E");
    const auto start = Clock::now();
    const float scale = 1.0f / std::sqrt(static_cast<float>(args.E));
    AttentionWeights w;
    w.n_heads = args.H;
    // As nn.MultiheadAttention holds them: q, k and v packed in in_proj_weight.
    const Matrix in_proj = random_matrix(0, 3 * args.E, args.E, scale);
    w.qkv = {in_proj, Vector::Zero(3 * args.E)};
    w.q = {in_proj.topRows(args.E), Vector::Zero(args.E)};
    w.k = {in_proj.middleRows(args.E, args.E), Vector::Zero(args.E)};
    w.v = {in_proj.bottomRows(args.E), Vector::Zero(args.E)};
    w.out = {random_matrix(1, args.E, args.E, scale), Vector::Zero(args.E)};
    const std::uint64_t stream = 2;
    w.validate();
    ModelInfo layer;
    layer.name = "--mha";
    layer.n_layers = 1;
    layer.n_heads = args.H;
    const Matrix x = random_matrix(stream, args.T, args.E, 1.0f);
    const double load_ms = ms_since(start);
    const Timings t = time_runs(args.repeat, [&] { (void)attention_forward(w, x); });
    out["workload"] = "mha";
    out["load_ms"] = load_ms;
    out["forward_ms_median"] = t.median_ms;
    out["forward_ms_min"] = t.min_ms;
    out["T"] = args.T;
    out["E"] = args.E;
    out["maps"] = args.H;
}

// --incremental: the recompute from the first ablated layer, against `full` (a whole forward).
void bench_resume(const BenchArgs& args, const Model& model, const ModelInput& first, const RunOptions& options,
                  const Timings& full, nlohmann::ordered_json& out) {
    if (!options.disabled_heads.any()) throw Error("--incremental needs --disable-heads");
    // The run to resume: the same input with every head on, each layer's input kept.
    RunOptions intact = options;
    intact.disabled_heads = {};
    intact.keep_layer_inputs = true;
    const ModelTrace kept = model.forward(first, intact);
    RunOptions resumed = options;
    resumed.resume_from = &kept;
    resumed.resume_layer = options.disabled_heads.first_layer();
    const Timings r = time_runs(args.repeat, [&] { (void)model.forward(first, resumed); });
    out["resume_layer"] = resumed.resume_layer;
    out["recompute_ms_median"] = r.median_ms;
    out["recompute_ms_min"] = r.min_ms;
    out["recompute_fraction"] = r.median_ms / full.median_ms;
}

// --appended N: the recompute of the last N positions from a kept run of the others,
// against `full` (a whole forward).
void bench_appended(const BenchArgs& args, const Model& model, const ModelInput& first, const RunOptions& options,
                    const Timings& full, nlohmann::ordered_json& out) {
    const Eigen::Index T = first.embeddings.rows();
    if (first.ids.empty() || args.appended >= T) {
        throw Error("--appended " + std::to_string(args.appended) + ": needs a text or --tokens input of more than " +
                    std::to_string(args.appended) + " tokens (this one has " + std::to_string(T) + ")");
    }
    const Eigen::Index p = T - args.appended;
    RunOptions keep = options;
    keep.keep_layer_inputs = true;
    const ModelTrace kept = model.forward(
        model.encode_ids(std::span<const std::int64_t>(first.ids.data(), static_cast<std::size_t>(p))), keep);
    RunOptions reuse = options;
    reuse.prefix_from = &kept;
    reuse.prefix_rows = p;
    const Timings r = time_runs(args.repeat, [&] { (void)model.forward(first, reuse); });
    out["reused_positions"] = p;
    out["recompute_ms_median"] = r.median_ms;
    out["recompute_ms_min"] = r.min_ms;
    out["recompute_fraction"] = r.median_ms / full.median_ms;
}

// --tokenizer: loading a folder's tokenizer, and tokenizing the text with it.
void bench_tokenizer(const BenchArgs& args, nlohmann::ordered_json& out) {
    const bool from_file = args.input.text_file_option->count() > 0;
    if (!from_file && args.input.text_option->count() == 0) throw Error("--tokenizer needs --text or --text-file");
    const std::string text = from_file ? read_sentence_file(args.input.text_file) : args.input.text;
    std::optional<tokenizer::FolderTokenizer> found;
    const Timings load = time_runs(args.repeat, [&] {
        found.reset();
        found = tokenizer::read_folder_tokenizer(args.tokenizer);
    });
    if (!found) throw Error("--tokenizer " + args.tokenizer + ": no tokenizer files in that folder");
    std::size_t tokens = 0;
    const Timings encode = time_runs(args.repeat, [&] { tokens = found->tokenizer.encode(text).size(); });
    out["workload"] = "tokenizer";
    out["tokenizer"] = args.tokenizer;
    out["files"] = found->files;
    out["load_ms_median"] = load.median_ms;
    out["load_ms_min"] = load.min_ms;
    out["text_bytes"] = text.size();
    out["tokens"] = tokens;
    out["encode_ms_median"] = encode.median_ms;
    out["encode_ms_min"] = encode.min_ms;
}

// --on-demand: what the window does on a long input, through its session code: forwards
// that keep no map (each reduced to its metrics and thumbnail on the way, the last row's
// logits only), then heads of the last run computed again whole, as selecting one does.
Timings bench_on_demand(const BenchArgs& args, const std::shared_ptr<const Model>& model,
                        const session::RunInput& input, const std::function<ModelInput()>& encode,
                        const RunOptions& options, nlohmann::ordered_json& out) {
    if (args.incremental || args.appended > 0) throw Error("--on-demand: not with --incremental or --appended");
    const ModelInfo& info = model->info();
    // Nothing to resume from, and no intact run: the window keeps both for head toggles.
    const session::Keeps keeps{.metrics = true, .intact_run = false, .resumable = false, .logit_rows = 1};
    const session::Request request = request_from(args.model, input, options, session::MapsPolicy::stream, keeps);
    session::ModelSession session;
    session.adopt(model, request.model);
    std::shared_ptr<const session::Snapshot> run;
    const Timings forward = time_runs(args.repeat, [&] {
        run.reset();   // the last run's state goes before the next is made
        run = session.compute_on(request, encode(), 1);
    });
    // Heads spread over the model, each computed again whole from what the run kept.
    std::vector<double> ms;
    const Eigen::Index T = run->input.embeddings.rows();
    for (int i = 0; i < std::max(args.repeat, 3); ++i) {
        const Eigen::Index layer = (i * 7) % info.n_layers;
        const Eigen::Index head = (i * 5) % info.n_heads;
        const auto start = Clock::now();
        const Matrix map = model->head_map(run->trace, layer, head);
        ms.push_back(ms_since(start));
        if (map.rows() != T) throw Error("--on-demand: a head's map came back the wrong size");
    }
    std::sort(ms.begin(), ms.end());
    out["maps_kept"] = false;
    out["logit_rows"] = run->trace.logits.rows();
    out["head_map_ms_median"] = ms[ms.size() / 2];
    out["head_map_ms_max"] = ms.back();
    out["summaries"] = run->thumbnails.size();
    return forward;
}

// "5, 12, 7": the first `n` ids of `input`, as a token-ids box holds them.
std::string ids_text(const ModelInput& input, Eigen::Index n) {
    std::string text;
    for (Eigen::Index i = 0; i < n; ++i) {
        text.append(i == 0 ? "" : ", ").append(std::to_string(input.ids[static_cast<std::size_t>(i)]));
    }
    return text;
}

// --as-window: the edit --incremental or --appended times, made as the window's worker
// makes it (session/model_session.h, the window's Request), from the run before it, each
// round timed end to end: the recompute, and what the window reads beside it (metrics,
// thumbnails, the intact run's logits, the output change). Against the engine's own
// recompute (`engine_ms`) in the same run.
void bench_window_edit(const BenchArgs& args, const std::shared_ptr<const Model>& model, const ModelInput& first,
                       const RunOptions& options, double engine_ms, nlohmann::ordered_json& out) {
    session::Keeps keeps;   // the window's: everything, a long decoder's last logits row only
    keeps.logits_when_shown = true;
    session::RunInput input;   // ids, so that the appended case cuts whole tokens
    input.kind = session::RunInput::Kind::token_ids;
    const auto T = first.embeddings.rows();
    if (first.ids.empty()) throw Error("--as-window: the window's edits are timed on text models");
    input.text = ids_text(first, T);
    const session::Request after = request_from(args.model, input, options, session::MapsPolicy::automatic, keeps);
    session::Request before = after;
    if (args.incremental) {
        before.disabled_heads = {};
    } else {
        before.input.text = ids_text(first, T - args.appended);
    }
    session::ModelSession session;
    session.adopt(model, after.model);
    std::uint64_t generation = 0;
    std::shared_ptr<const session::Snapshot> run;
    // When the maps alone went up (the window draws them then; ComputeControl::on_maps),
    // from the start of the round; the whole round where they went up with the numbers.
    std::optional<double> maps_ms;
    Clock::time_point round_start;
    session::ComputeControl control;
    control.on_maps = [&](const std::shared_ptr<const session::Snapshot>&) { maps_ms = ms_since(round_start); };
    std::vector<double> to_maps;
    const Timings edit = time_runs_between(
        args.repeat,
        [&] {
            run.reset();
            run = session.compute(before, ++generation);
            maps_ms.reset();
        },
        [&] {
            // Started inside the timed call, so that maps up "with the numbers" (no early
            // hand-over) is never timed longer than the round itself.
            round_start = Clock::now();
            run = session.compute(after, ++generation, control);
            to_maps.push_back(maps_ms.value_or(ms_since(round_start)));
        });
    to_maps.erase(to_maps.begin());   // the warm-up round
    std::sort(to_maps.begin(), to_maps.end());
    const double maps_median = to_maps[to_maps.size() / 2];
    out["window_recompute_ms_median"] = edit.median_ms;
    out["window_recompute_ms_min"] = edit.min_ms;
    out["window_over_engine"] = edit.median_ms / engine_ms;
    out["window_maps_ms_median"] = maps_median;
    out["window_maps_over_engine"] = maps_median / engine_ms;
    out["window_maps_streamed"] = run->maps_streamed;
}

// A model's load and forward, and with --incremental / --appended its recompute.
void bench_model(const BenchArgs& args, nlohmann::ordered_json& out, Warnings& warnings) {
    if (args.model.path.empty()) throw Error("give --model PATH (with --text, --image or --tokens), or --mha");
    const auto start = Clock::now();
    const std::shared_ptr<const Model> model = open_model_from(args.model, warnings);
    const double load_ms = ms_since(start);
    const session::RunInput input = run_input_from(args.input);
    const ModelInput first = session::encode_run_input(*model, input);                       // checks the input once
    if (!args.on_demand) check_maps_fit_in_memory(model->info(), first.embeddings.rows());   // every map kept
    const RunOptions options = run_options_from(args.run, model->info());
    // An image file is decoded once: PyTorch's forward, too, starts from pixels.
    const bool image = input.kind == session::RunInput::Kind::image;
    const RgbImage pixels = image ? decode_image_file(input.image_path) : RgbImage{};
    const auto encode = [&] {
        return image ? model->encode_image(pixels, input.image_options) : session::encode_run_input(*model, input);
    };
    out["workload"] = model->info().name;
    const Timings t = args.on_demand ? bench_on_demand(args, model, input, encode, options, out)
                                     : time_runs(args.repeat, [&] { (void)model->forward(encode(), options); });
    if (args.incremental) bench_resume(args, *model, first, options, t, out);
    if (args.appended > 0) bench_appended(args, *model, first, options, t, out);
    if (args.as_window) {
        if (!args.incremental && args.appended == 0) throw Error("--as-window needs --incremental or --appended");
        bench_window_edit(args, model, first, options, out["recompute_ms_median"].get<double>(), out);
    }
    out["load_ms"] = load_ms;
    out["forward_ms_median"] = t.median_ms;
    out["forward_ms_min"] = t.min_ms;
    out["T"] = first.embeddings.rows();
    out["maps"] = model->info().n_layers * model->info().n_heads;
}

}   // namespace

Command add_bench_command(CLI::App& app) {
    auto args = std::make_shared<BenchArgs>();
    CLI::App* cmd = app.add_subcommand(
        "bench", "Time a model's load and forward (every head's map kept), or one synthetic attention layer (--mha)");
    add_bench_options(cmd, *args);
    return {cmd, [args](Warnings& warnings) {
                if (args->threads > 1 && compute_threads() == 1 && std::getenv("OMP_NUM_THREADS") == nullptr) {
                    throw Error("--threads " + std::to_string(args->threads) +
                                ": this build computes on one thread (built without OpenMP; --threads 1)");
                }
                set_compute_threads(args->threads);
                nlohmann::ordered_json out;
                if (args->mha) {
                    bench_mha_layer(*args, out);
                } else if (!args->tokenizer.empty()) {
                    bench_tokenizer(*args, out);
                } else {
                    bench_model(*args, out, warnings);
                }
                out["repeat"] = args->repeat;
                out["threads"] = args->threads;
                out["peak_rss_mb"] = peak_rss_mb();
                std::printf("%s\n", out.dump().c_str());
                return 0;
            }};
}

}   // namespace headscope::cli
