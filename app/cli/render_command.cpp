// `headscope-cli render`: one head (matrix), one head over the image (overlay) or
// every head (grid) as a PNG, without a window.

#include "app/cli/command.h"
#include "app/cli/model_args.h"
#include "core/base/error.h"
#include "core/base/shown.h"
#include "core/render/png_export.h"
#include "core/render/render.h"
#include "session/attention_kind.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

namespace headscope::cli {

namespace {

struct RenderArgs {
    ModelArgs model;
    InputArgs input;
    RunArgs run;
    int layer = 0;
    int head = 0;
    int query = 0;
    std::string view = "matrix";
    std::string kind = "decoder";
    std::string colormap = "viridis";
    std::string scale = "shared";
    std::string out;
};

void add_render_options(CLI::App* cmd, RenderArgs& args) {
    add_model_options(cmd, args.model);
    add_input_options(cmd, args.input);
    add_run_options(cmd, args.run);
    cmd->add_option("--layer", args.layer, "Layer L (0-based)")->capture_default_str();
    cmd->add_option("--head", args.head, "Head H (0-based)")->capture_default_str();
    cmd->add_option("--view", args.view, "matrix, overlay (image models) or grid")
        ->capture_default_str()
        ->check(CLI::IsMember({"matrix", "overlay", "grid"}));
    add_kind_option(cmd, args.kind,
                    "T5, BART: decoder (its self-attention), encoder, or cross (each target token over the source)");
    cmd->add_option("--query", args.query,
                    "overlay: the query position whose attention is drawn (0 = [CLS], or the first patch without one)")
        ->capture_default_str();
    cmd->add_option("--colormap", args.colormap, "viridis, magma, cividis or greys")
        ->capture_default_str()
        ->check(CLI::IsMember({"viridis", "magma", "cividis", "greys"}));
    cmd->add_option("--scale", args.scale, "shared (0..1 for every map) or head (the head's own max)")
        ->capture_default_str()
        ->check(CLI::IsMember({"shared", "head"}));
    cmd->add_option("--out", args.out, "Output .png")->required();
}

// The layer, head and view against what the model has.
void check_render_choice(const RenderArgs& args, const ModelInfo& info) {
    const bool encoder = kind_from(args.kind, info) == session::AttentionKind::encoder;
    const Eigen::Index layers =
        session::kind_layers(info, encoder ? session::AttentionKind::encoder : session::AttentionKind::decoder);
    if (args.layer < 0 || args.layer >= layers) {
        throw Error("--layer " + std::to_string(args.layer) + ": " + info.name + " has " +
                    (info.encoder_decoder ? std::string(encoder ? "encoder " : "decoder ") : std::string()) +
                    "layers 0.." + std::to_string(layers - 1));
    }
    if (args.head < 0 || args.head >= info.n_heads) {
        throw Error("--head " + std::to_string(args.head) + ": " + info.name + " has heads 0.." +
                    std::to_string(info.n_heads - 1));
    }
    if (args.view == "overlay" && !info.takes_image) {
        throw Error("--view overlay draws attention over an image; " + info.name + " takes text");
    }
}

// "model  layer L head H", and the head's role when the model names one.
std::string head_title(const RenderArgs& args, const ModelInfo& info) {
    const std::string where = info.name + (info.encoder_decoder ? "  " + args.kind : std::string()) + "  layer " +
                              std::to_string(args.layer) + " head " + std::to_string(args.head);
    std::string role;
    if (!info.head_roles.empty())
        role = info.head_roles[static_cast<std::size_t>(args.layer)][static_cast<std::size_t>(args.head)];
    return role.empty() ? where : where + ": " + role.substr(0, role.find(':'));
}

int run_render(const RenderArgs& args, Warnings& warnings) {
    // A PNG under another name would mislead whatever opens it by its extension.
    const std::string& out = args.out;
    if (out.size() < 4 || !std::equal(out.end() - 4, out.end(), ".png", [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == b;
        })) {
        throw Error("--out " + shown(out) + ": render writes PNG; expected a file name ending in .png");
    }
    check_output("--out", out, input_paths(args.model, &args.input));
    auto model = open_model_from(args.model, warnings);
    const ModelInfo info = model->info();
    check_render_choice(args, info);
    // Through the window's session: a long input streams its maps, and the head drawn is
    // computed again from what the run kept.
    const session::Keeps keeps{.metrics = false, .intact_run = false, .resumable = false};
    const auto run = run_in_session(std::move(model), request_from(args.model, run_input_from(args.input),
                                                                   run_options_from(args.run, info),
                                                                   session::MapsPolicy::automatic, keeps));
    const ModelInput& input = run->input;
    const session::KindMaps kind = session::kind_maps(*run, *session::attention_kind_named(args.kind));
    const ModelTrace& trace = kind.trace;
    const HeadMaps maps(trace, kind.model);
    Matrix scratch;
    const Matrix& weights = maps.map(args.layer, args.head, scratch);

    RenderStyle style;
    style.colormap = colormap_from_name(args.colormap).value_or(Colormap::viridis);
    if (args.scale == "head") style.scale_max = std::max(weights.maxCoeff(), 1e-12f);
    const std::string title = head_title(args, info);

    RgbaImage picture;
    if (args.view == "grid") {
        picture = render_grid(maps, trace.mask,
                              info.name + (info.encoder_decoder ? " (" + args.kind + ")" : std::string()) +
                                  ": every layer x head (each on its own scale)",
                              style);
    } else if (args.view == "overlay") {
        if (args.query < 0 || args.query >= weights.rows()) {
            throw Error("--query " + std::to_string(args.query) + ": positions are 0.." +
                        std::to_string(weights.rows() - 1) +
                        (input.n_prefix_tokens > 0 ? " (0 = [CLS])" : " (the patches, left to right, top to bottom)"));
        }
        picture = render_overlay(input.pixels, weights, args.query, input.grid_width, input.grid_height,
                                 input.n_prefix_tokens,
                                 title + "  (query " + input.labels[static_cast<std::size_t>(args.query)] + ")", style);
    } else {
        const Mask* allowed = trace.mask ? &*trace.mask : nullptr;
        picture = render_matrix(weights, allowed, kind.query_labels, kind.key_labels, title, style);
    }
    write_png(args.out, picture);
    std::printf("wrote %s: %d x %d px\n", args.out.c_str(), picture.width, picture.height);
    return 0;
}

}   // namespace

Command add_render_command(CLI::App& app) {
    auto args = std::make_shared<RenderArgs>();
    CLI::App* cmd = app.add_subcommand("render", "Draw attention as a PNG: one head's matrix, one head over the "
                                                 "image, or the grid of every head");
    add_render_options(cmd, *args);
    return {cmd, [args](Warnings& warnings) { return run_render(*args, warnings); }};
}

}   // namespace headscope::cli
