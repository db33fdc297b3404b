// `headscope-cli analyze`: head metrics, attention rollout, head similarity and the
// head-importance scan of one input, written as JSON (everything) or CSV (one row per
// head). Definitions in core/analysis/head_metrics.h, core/analysis/rollout.h, core/analysis/head_similarity.h and
// core/analysis/ablation_effects.h.

#include "app/cli/command.h"
#include "app/cli/model_args.h"
#include "core/analysis/analysis_report.h"
#include "core/base/error.h"
#include "core/base/output_file.h"
#include "core/base/shown.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace headscope::cli {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A percentage on stderr while a slow section runs, when stderr is a terminal (scripts
// and tests get only the final line).
LoadControl progress_on_terminal(const char* what) {
    LoadControl control;
    if (isatty(STDERR_FILENO) == 0) return control;
    control.on_progress = [what, last = -1](double fraction) mutable {
        const int percent = static_cast<int>(fraction * 100.0);
        if (percent == last) return;
        last = percent;
        std::fprintf(stderr, "\r%s: %3d%%%s", what, percent, percent == 100 ? "\n" : "");
    };
    return control;
}

struct AnalyzeArgs {
    ModelArgs model;
    InputArgs input;
    RunArgs run;
    bool metrics = false;
    bool rollout = false;
    std::string fusion = "mean";
    double discard_ratio = 0.0;
    int start_layer = 0;
    int end_layer = -1;
    bool similarity = false;
    bool importance = false;
    std::string kind = "decoder";
    std::string out;
};

void add_analyze_options(CLI::App* cmd, AnalyzeArgs& args) {
    add_model_options(cmd, args.model);
    add_input_options(cmd, args.input);
    add_run_options(cmd, args.run);
    cmd->add_flag("--metrics", args.metrics,
                  "Per-head entropy, mean distance, concentration and pattern scores (the default when nothing else "
                  "is asked for)");
    cmd->add_flag("--rollout", args.rollout, "Attention rollout through the layers (JSON only)");
    cmd->add_option("--fusion", args.fusion, "rollout: how the heads of a layer combine: mean, max or min")
        ->capture_default_str()
        ->check(CLI::IsMember({"mean", "max", "min"}));
    cmd->add_option("--discard-ratio", args.discard_ratio,
                    "rollout: the fraction of each layer's lowest fused weights dropped, 0 <= r < 1")
        ->capture_default_str();
    cmd->add_option("--start-layer", args.start_layer, "rollout: the first layer multiplied in")->capture_default_str();
    cmd->add_option("--end-layer", args.end_layer, "rollout: the last layer multiplied in (-1: the last)")
        ->capture_default_str();
    cmd->add_flag("--similarity", args.similarity,
                  "Jensen-Shannon divergence between every pair of heads, their clustering order and 2-D MDS map");
    cmd->add_flag("--importance", args.importance,
                  "Ablate each head alone and measure the output change (KL of the prediction, or the relative "
                  "change of the final hidden states for models without a head)");
    add_kind_option(cmd, args.kind,
                    "T5, BART: the attention measured: decoder (its self-attention), encoder, or cross (each "
                    "target token over the source: its monotonicity)");
    cmd->add_option("--out", args.out, "Output .json or .csv")->required();
}

// Refuses an --out that cannot or must not be written, before the model loads.
void check_analyze_out(const AnalyzeArgs& args) {
    const bool csv = ends_with(args.out, ".csv");
    if (!csv && !ends_with(args.out, ".json")) {
        throw Error("--out " + shown(args.out) + ": expected a file name ending in .json or .csv");
    }
    if (csv && args.rollout) {
        throw Error("--rollout writes a [T, T] matrix, which a CSV of one row per head cannot hold: "
                    "use --out FILE.json");
    }
    check_output("--out", args.out, input_paths(args.model, &args.input));
}

RolloutResult rollout_of(const AnalyzeArgs& args, const HeadMaps& maps, const ModelInfo& info,
                         const RunOptions& options) {
    RolloutResult rollout;
    rollout.options.fusion = head_fusion_from_name(args.fusion).value_or(HeadFusion::mean);
    rollout.options.discard_ratio = args.discard_ratio;
    rollout.options.start_layer = args.start_layer;
    rollout.options.end_layer = args.end_layer == -1 ? static_cast<int>(info.n_layers) - 1 : args.end_layer;
    rollout.options.disabled_heads = options.disabled_heads;
    rollout.matrix = attention_rollout(maps, rollout.options, progress_on_terminal("rollout"));
    return rollout;
}

// What an encoder-decoder's other kinds cannot give: rollout follows self-attention through
// one stack (cross-attention's maps are [Tt, Ts]); the importance scan switches off the
// decoder's own heads one at a time.
void check_kind_analyses(const AnalyzeArgs& args, session::AttentionKind kind) {
    if (kind == session::AttentionKind::cross && args.rollout) {
        throw Error("--rollout --kind cross: rollout multiplies self-attention through the layers, and "
                    "cross-attention's maps are target x source (--kind encoder or decoder)");
    }
    if (kind != session::AttentionKind::decoder && args.importance) {
        throw Error("--importance --kind " + args.kind +
                    ": the scan switches off the decoder's own heads one at a time (leave out --kind)");
    }
}

int run_analyze(const AnalyzeArgs& args, Warnings& warnings) {
    check_analyze_out(args);
    const bool csv = ends_with(args.out, ".csv");
    const bool metrics = args.metrics || (!args.rollout && !args.similarity && !args.importance);

    auto model = open_model_from(args.model, warnings);
    const ModelInfo& model_info = model->info();
    RunOptions options = run_options_from(args.run, model_info);
    const session::AttentionKind kind = kind_from(args.kind, model_info);
    check_kind_analyses(args, kind);
    // Through the window's session: the same metrics, and a long input's maps streamed,
    // each computed again where rollout and similarity read it.
    const session::Keeps keeps{.metrics = metrics, .intact_run = false, .resumable = false};
    const auto whole = run_in_session(std::move(model), request_from(args.model, run_input_from(args.input), options,
                                                                     session::MapsPolicy::automatic, keeps));
    // The kind's maps, rows, layers and heads off (session/attention_kind.h); the run itself
    // for the decoder's. The importance scan (the decoder's kind alone) runs the model.
    const auto run = session::kind_snapshot(whole, kind);
    const ModelInfo& info = run->info;
    const ModelInput& input = run->input;
    const HeadMaps maps(run->trace, run->model_ref.get());
    if (run->maps_streamed) options.on_map = [](Eigen::Index, Eigen::Index, const Matrix&) {};
    options.disabled_heads = run->options.disabled_heads;

    AnalysisReport report;
    report.model = info.name;
    report.tokens = input.labels;
    report.n_layers = info.n_layers;
    report.n_heads = info.n_heads;
    if (metrics) report.metrics = run->metrics;
    if (args.rollout) report.rollout = rollout_of(args, maps, info, options);
    if (args.similarity) report.similarity = head_similarity(maps, {}, progress_on_terminal("similarity"));
    if (args.importance) {
        report.importance =
            importance_scan(*whole->model_ref, whole->input, options, progress_on_terminal("importance scan"));
    }

    const std::string text = csv ? analysis_csv(report) : analysis_json(report);
    write_file_atomically(args.out, std::as_bytes(std::span<const char>(text.data(), text.size())));
    std::printf("wrote %s: %lld layers x %lld heads, %lld tokens\n", args.out.c_str(),
                static_cast<long long>(info.n_layers), static_cast<long long>(info.n_heads),
                static_cast<long long>(input.labels.size()));
    return 0;
}

}   // namespace

Command add_analyze_command(CLI::App& app) {
    auto args = std::make_shared<AnalyzeArgs>();
    CLI::App* cmd =
        app.add_subcommand("analyze", "Head metrics, attention rollout, head similarity and head importance "
                                      "for one input, as JSON or CSV");
    add_analyze_options(cmd, *args);
    return {cmd, [args](Warnings& warnings) { return run_analyze(*args, warnings); }};
}

}   // namespace headscope::cli
