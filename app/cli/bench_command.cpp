// `headscope-cli bench`: how long a model takes to load and to produce every head's
// map, and how much memory it held at most (CLI.md). One JSON object on stdout, so
// scripts (tools/bench_vs_torch.py) can read it. Timings are wall-clock medians and
// minima over --repeat forwards after one warm-up run; every map is kept, as the app
// keeps them.

#include "app/cli/command.h"
#include "app/cli/model_args.h"
#include "core/attention.h"
#include "core/error.h"
#include "core/seeded_random.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
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
Timings time_runs(int repeat, const std::function<void()>& run) {
    run();
    std::vector<double> ms;
    for (int i = 0; i < repeat; ++i) {
        const auto start = Clock::now();
        run();
        ms.push_back(ms_since(start));
    }
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    return {n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front()};
}

Matrix random_matrix(std::uint64_t stream, Eigen::Index rows, Eigen::Index cols, float scale) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = scale * seeded_normal(1, stream, static_cast<std::uint64_t>(i));
    return m;
}

} // namespace

Command add_bench_command(CLI::App& app) {
    struct Args {
        ModelArgs model;
        InputArgs input;
        RunArgs run;
        int repeat = 5;
        int threads = 1;
        bool mha = false;
        Eigen::Index T = 0;
        Eigen::Index E = 0;
        Eigen::Index H = 0;
    };
    auto args = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand(
        "bench", "Time a model's load and forward (every head's map kept), or one synthetic attention layer (--mha)");
    add_model_options(cmd, args->model, true);
    add_input_options(cmd, args->input);
    add_run_options(cmd, args->run);
    cmd->add_option("--repeat", args->repeat, "Timed forwards, after one warm-up")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--threads", args->threads, "Threads to compute on")->capture_default_str()->check(CLI::Range(1, 256));
    auto* mha = cmd->add_flag("--mha", args->mha, "One self-attention layer with seeded random weights instead of a model");
    cmd->add_option("--T", args->T, "--mha: sequence length")->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--E", args->E, "--mha: model width (at most 8192: 4 x E x E weights)")->check(CLI::Range(1, 8192));
    cmd->add_option("--H", args->H, "--mha: heads (E divisible by H)")->check(CLI::Range(1, 1 << 10));
    mha->excludes(cmd->get_option("--model"));
    return {cmd, [args] {
                if (args->threads != 1) {
                    throw Error("--threads " + std::to_string(args->threads) +
                                ": this build computes on one thread (--threads 1)");
                }
                nlohmann::ordered_json out;
                if (args->mha) {
                    if (args->T < 1 || args->E < 1 || args->H < 1) throw Error("--mha needs --T, --E and --H");
                    if (args->E % args->H != 0) {
                        throw Error("--E " + std::to_string(args->E) + " is not divisible by --H " + std::to_string(args->H));
                    }
                    const auto start = Clock::now();
                    const float scale = 1.0f / std::sqrt(static_cast<float>(args->E));
                    AttentionWeights w;
                    w.n_heads = args->H;
                    std::uint64_t stream = 0;
                    for (Linear* l : {&w.q, &w.k, &w.v, &w.out}) {
                        l->weight = random_matrix(stream++, args->E, args->E, scale);
                        l->bias = Vector::Zero(args->E);
                    }
                    w.validate();
                    ModelInfo layer;
                    layer.name = "--mha";
                    layer.n_layers = 1;
                    layer.n_heads = args->H;
                    check_maps_fit_in_memory(layer, args->T);
                    const Matrix x = random_matrix(stream, args->T, args->E, 1.0f);
                    const double load_ms = ms_since(start);
                    const Timings t = time_runs(args->repeat, [&] { (void)attention_forward(w, x); });
                    out["workload"] = "mha";
                    out["load_ms"] = load_ms;
                    out["forward_ms_median"] = t.median_ms;
                    out["forward_ms_min"] = t.min_ms;
                    out["T"] = args->T;
                    out["E"] = args->E;
                    out["maps"] = args->H;
                } else {
                    if (args->model.path.empty()) throw Error("give --model PATH (with --text, --image or --tokens), or --mha");
                    const auto start = Clock::now();
                    const auto model = open_model_from(args->model);
                    const double load_ms = ms_since(start);
                    const ModelInput input = encode_input(*model, args->input);
                    const RunOptions options = run_options_from(args->run, model->info());
                    const Timings t = time_runs(args->repeat, [&] { (void)model->forward(input, options); });
                    out["workload"] = model->info().name;
                    out["load_ms"] = load_ms;
                    out["forward_ms_median"] = t.median_ms;
                    out["forward_ms_min"] = t.min_ms;
                    out["T"] = input.embeddings.rows();
                    out["maps"] = model->info().n_layers * model->info().n_heads;
                }
                out["repeat"] = args->repeat;
                out["threads"] = args->threads;
                out["peak_rss_mb"] = peak_rss_mb();
                std::printf("%s\n", out.dump().c_str());
                return 0;
            }};
}

} // namespace headscope::cli
