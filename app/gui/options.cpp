#include "app/gui/options.h"

#include "app/gui/harness_modes.h"

#include "core/base/error.h"
#include "core/base/index_lists.h"
#include "core/base/output_file.h"
#include "core/models/assets.h"
#include "core/models/generate.h"
#include "core/models/model_registry.h"
#include "session/recent.h"
#include "session/session_file.h"
#include "session/view_settings.h"
#include "ui/views/view_list.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

namespace headscope::gui {

namespace {

// Used when assets/default_sentence.txt cannot be read (an app copied elsewhere).
constexpr const char* fallback_sentence = "The cat sat on the mat because the cat was tired .";

std::string default_sentence() {
    std::ifstream in(assets_dir() / "default_sentence.txt");
    std::string line;
    if (in && std::getline(in, line) && !line.empty()) return line;
    return fallback_sentence;
}

// --model's help from the registry: the built-in models and the checkpoint families.
std::string model_help() {
    std::string text;
    for (const BuiltinModel& model : builtin_models()) text += model.name + ", ";
    text += "or a Hugging Face checkpoint folder (config.json with model_type ";
    const std::vector<std::string> types = hf_supported_model_types();
    for (std::size_t i = 0; i < types.size(); ++i) text += (i > 0 ? ", " : "") + types[i];
    return text + "; model.safetensors)";
}

// Flags read as text first, turned into choices once every flag is in.
struct RawFlags {
    std::string tokens;
    std::string labels;
    std::string label_tokens;
    std::string disable;
    std::string target_tokens;
    std::string kind = "decoder";
    std::string disable_encoder;
    std::string disable_cross;
    std::string view = "matrix";
    std::string metric;
    std::string colormap = "viridis";
    std::string maps = "auto";
    std::string size = "1280x800";
    bool causal = false;
    bool own_resolution = false;
    float keep_mass_percent = 0.0f;
    bool colour_by_metric = false;
    bool sort_by_metric = false;
    std::string session;   // --session FILE
    bool fresh = false;    // --fresh
};

// T5 and BART: the decoder's target, generation, the kind of attention shown and the
// encoder's and cross-attention's heads switched off.
void add_encoder_decoder_options(CLI::App& cli, GuiOptions& o, RawFlags& raw) {
    session::AppState& state = o.state;
    auto* target = cli.add_option("--target", state.target,
                                  "T5, BART: the decoder's target text (shifted right after its start token)");
    auto* target_tokens = cli.add_option("--target-tokens", raw.target_tokens,
                                         "T5, BART: the decoder's input ids, start token included (\"0,5,6\")");
    auto* generate = cli.add_option("--generate", state.generate,
                                    "T5, BART: the target decoded greedily from the source, up to N tokens")
                         ->check(CLI::Range(1, max_generated_tokens));
    target->excludes(target_tokens)->excludes(generate);
    target_tokens->excludes(generate);
    cli.add_option("--kind", raw.kind, "T5, BART: the attention the views show: decoder, encoder or cross")
        ->check(CLI::IsMember({"decoder", "encoder", "cross"}))
        ->capture_default_str();
    cli.add_option("--disable-encoder-heads", raw.disable_encoder,
                   "T5, BART: the encoder's heads to ablate, as LAYER.HEAD pairs");
    cli.add_option("--disable-cross-heads", raw.disable_cross,
                   "T5, BART: the decoder's cross-attention heads to ablate, as LAYER.HEAD pairs");
}

// A LAYER.HEAD list into `flags`, sized to the heads it names until the model is in
// (fit_to_model keeps the flags that fit).
void set_heads_named(const std::string& flag, const std::string& list, HeadMask& flags,
                     std::vector<std::pair<std::int64_t, std::int64_t>>* named = nullptr) {
    if (list.empty()) return;
    const auto pairs = parse_layer_head_list(flag, list);
    for (const auto& [l, h] : pairs) {
        flags.resize(std::max<Eigen::Index>(flags.layers(), l + 1), std::max<Eigen::Index>(flags.heads(), h + 1));
        flags.set(l, h);
    }
    if (named != nullptr) *named = pairs;
}

void add_input_options(CLI::App& cli, GuiOptions& o, RawFlags& raw) {
    session::AppState& state = o.state;
    cli.add_option("--model", state.model.name, model_help())->capture_default_str();
    cli.add_option("--tower", state.model.tower, "text: a CLIP or SigLIP folder's text tower alone (a text model)")
        ->check(CLI::IsMember({"text"}));
    auto* text_option = cli.add_option("--text", state.text, "The sentence to show (text models)");
    cli.add_option("--tokens", raw.tokens,
                   "Token ids, comma-separated, read as ids by every text model (the sentence box then holds ids)")
        ->excludes(text_option);
    cli.add_option("--image", state.image_path, "The image to show (image models)");
    auto* labels = cli.add_option(
        "--labels", raw.labels,
        "CLIP, SigLIP: labels to score the picture against, comma-separated (\"a photo of a cat,a diagram\")");
    cli.add_option("--label-tokens", raw.label_tokens,
                   "CLIP, SigLIP: labels as token ids, ids comma-separated, labels by ';' (\"260,638,1;262,1\")")
        ->excludes(labels);
    cli.add_flag("--causal", raw.causal, "Start with the causal mask on (GPT-2 has it on anyway)");
    cli.add_flag("--own-resolution", raw.own_resolution,
                 "Image checkpoints: run the picture at its own size, position embeddings interpolated (DINO-style)");
    cli.add_option("--layer", state.layer, "Selected layer")->check(CLI::Range(0, 63));
    cli.add_option("--head", state.head, "Selected head")->check(CLI::Range(0, 255));
    cli.add_option("--query", state.query,
                   "Pinned query position (image view: the patch, 0 = [CLS], or the first patch without one)");
    cli.add_option("--disable", raw.disable, "Heads to ablate, as LAYER.HEAD pairs, e.g. 0.1,1.0");
    cli.add_option("--seed", state.model.config.seed, "Seed of the demo model's weights and embeddings")
        ->check(CLI::Validator([](std::string& text) { return seed_problem(text); }, "0..2^64-1"));
    // A session holds these choices itself: given both, which one wins would be a guess.
    auto* session = cli.add_option("--session", raw.session,
                                   "Start from a session saved with File > Save session (model, input, masks, "
                                   "disabled heads, head, view, colours)");
    for (const char* flag : {"--model", "--tower", "--text", "--tokens", "--image", "--labels", "--label-tokens",
                             "--causal", "--layer", "--head", "--query", "--disable", "--seed"}) {
        session->excludes(cli.get_option(flag));
    }
    cli.add_flag("--fresh", raw.fresh,
                 "Start on the built-in demo, not where the window was left (it keeps its last session)")
        ->excludes(session);
}

// A plain launch starts where the window was left: no choice of model, input or heads on
// the command line, no --fresh, and not a harness run (screenshot, benchmark, a test mode).
bool restores_last_session(const CLI::App& cli, const GuiOptions& o, const RawFlags& raw) {
    if (raw.fresh || !raw.session.empty() || !o.screenshot_path.empty() || o.bench_frames > 0 || o.test_mode)
        return false;
    for (const char* flag : {"--model", "--tower", "--text", "--tokens", "--image", "--labels", "--label-tokens",
                             "--causal", "--layer", "--head", "--query", "--disable", "--seed"}) {
        if (cli.count(flag) > 0) return false;
    }
    return true;
}

void add_view_options(CLI::App& cli, GuiOptions& o, RawFlags& raw) {
    std::vector<std::string> view_names;
    for (const auto& view : ui::make_views()) view_names.emplace_back(view->name());
    cli.add_option("--view", raw.view, "The tab to open on: " + ui::view_names())
        ->capture_default_str()
        ->check(CLI::IsMember(view_names));
    std::vector<std::string> metric_names;
    for (int k = 0; k < metric_count; ++k) metric_names.emplace_back(metric_name(static_cast<Metric>(k)));
    cli.add_option("--metric", raw.metric, "The metric the Heads view plots and the Model grid colours or sorts by")
        ->check(CLI::IsMember(metric_names));
    cli.add_flag("--colour-by-metric", raw.colour_by_metric, "Model view: frame each head in its --metric colour");
    cli.add_flag("--sort-by-metric", raw.sort_by_metric, "Model view: order each layer's heads by --metric");
    cli.add_option("--keep-mass", raw.keep_mass_percent,
                   "Image view: outline the fewest patches holding this percentage of each map's attention (DINO)")
        ->check(CLI::Range(1.0f, 99.0f));
    cli.add_flag("--scan-importance", o.scan_importance,
                 "Start the head-importance scan (each head disabled alone) once the first result is in");
    cli.add_option("--colormap", raw.colormap, "viridis, magma, cividis or greys")
        ->check(CLI::IsMember({"viridis", "magma", "cividis", "greys"}));
    cli.add_option("--maps", raw.maps,
                   "auto: keep every head's map while they take at most 1 GiB, else compute a map when it is shown; "
                   "keep; on-demand")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "keep", "on-demand"}));
    cli.add_option("--size", raw.size, "Window size WIDTHxHEIGHT")->capture_default_str();
    cli.add_option("--scale", o.scale,
                   "Content scale of text and layout, e.g. 2 on a HiDPI screen (default: the monitor's own)")
        ->check(CLI::Range(0.5f, 4.0f));
    cli.footer("Views:\n" + ui::view_summaries());
}

void add_harness_options(CLI::App& cli, GuiOptions& o) {
    cli.add_option("--screenshot", o.screenshot_path,
                   "Render once the result is ready, write the window to this PNG and exit");
    cli.add_option("--screenshot-after", o.screenshot_after,
                   "With --screenshot: stay interactive (visible, taking input) for this many seconds first")
        ->check(CLI::Range(0.0, 600.0));
    cli.add_option("--bench-frames", o.bench_frames,
                   "Once the first result is shown, time N frames (CPU, swap excluded), print one line and exit")
        ->check(CLI::Range(1, 1000000));
    cli.add_flag("--bench-recompute", o.bench_recompute,
                 "With --bench-frames: keep the worker recomputing (head 0.0 switched off and on again each time "
                 "a result is in) and time whole frames, swap included, paced as by a 60 Hz display: the frame "
                 "rate while recomputing")
        ->needs(cli.get_option("--bench-frames"));
}

// The checks CLI11 cannot state, and the --disable list (sized to the model once it loads:
// fit_to_model keeps the flags that fit).
void check_combinations(const CLI::App& cli, GuiOptions& o, const RawFlags& raw) {
    if (std::sscanf(raw.size.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 320 || o.height < 240 ||
        o.width > 8192 || o.height > 8192) {
        throw CLI::ValidationError("--size", "expected WIDTHxHEIGHT, e.g. 1600x1000 (320x240 .. 8192x8192)");
    }
    if (o.bench_frames > 0 && !o.screenshot_path.empty()) {
        throw CLI::ValidationError("--bench-frames", "cannot be used with --screenshot");
    }
    // The same parser as headscope-cli's --tokens, so a bad list is refused at start the same way.
    if (cli.count("--tokens") > 0) parse_index_list("--tokens", raw.tokens, "464,3797,3332");
    if (!o.screenshot_path.empty()) {
        const std::string& model = o.state.model.name;
        const InputPath inputs[] = {{"--model", model.starts_with("builtin:") ? "" : model, true},
                                    {"--image", o.state.image_path, false}};
        check_output("--screenshot", o.screenshot_path, inputs);
    }
    if (cli.count("--target-tokens") > 0) parse_index_list("--target-tokens", raw.target_tokens, "0,5,6");
    // Before the model is known: sized to the heads named, fitted to the model once it is in.
    set_heads_named("--disable", raw.disable, o.state.disabled_heads, &o.start_choices.disabled);
    set_heads_named("--disable-encoder-heads", raw.disable_encoder, o.state.disabled_encoder_heads,
                    &o.start_choices.disabled_encoder);
    set_heads_named("--disable-cross-heads", raw.disable_cross, o.state.disabled_cross_heads,
                    &o.start_choices.disabled_cross);
}

// What a flag chooses of a view's own settings, over those a session gave it: the
// window hands each view its settings when it opens (View::restore).
void apply_view_flags(const RawFlags& raw, session::AppState& state) {
    const auto give = [&state](const char* view, const session::SettingsWriter& fields) {
        std::string& settings = state.view_settings[view];
        settings = session::merge_settings(settings, fields.text(), std::string("the session's '") + view + "' view");
    };
    if (raw.colour_by_metric || raw.sort_by_metric) {
        session::SettingsWriter fields;
        if (raw.colour_by_metric) fields.set("colour_by_metric", true);
        if (raw.sort_by_metric) fields.set("sort_by_metric", true);
        give("model", fields);
    }
    if (raw.keep_mass_percent > 0.0f) {
        session::SettingsWriter fields;
        fields.set("keep_mass", true).set("keep_mass_share", static_cast<double>(raw.keep_mass_percent) / 100.0);
        give("image", fields);
    }
}

void apply_flags(const CLI::App& cli, GuiOptions& o, const RawFlags& raw) {
    session::AppState& state = o.state;
    if (cli.count("--tokens") > 0) {
        state.text = raw.tokens;
        state.text_is_ids = true;
    }
    if (cli.count("--image") > 0) session::choose_picture(state, state.image_path);
    if (cli.count("--target-tokens") > 0) {
        state.target = raw.target_tokens;
        state.target_is_ids = true;
    }
    state.kind = session::attention_kind_named(raw.kind).value_or(session::AttentionKind::decoder);
    if (cli.count("--labels") > 0) {   // the box holds one per line
        state.labels = raw.labels;
        std::replace(state.labels.begin(), state.labels.end(), ',', '\n');
    }
    if (cli.count("--label-tokens") > 0) {   // one label's ids per line
        state.labels = raw.label_tokens;
        std::replace(state.labels.begin(), state.labels.end(), ';', '\n');
        state.labels_are_ids = true;
    }
    session::suit_demo_picture(state);
    if (raw.causal) state.causal = true;
    state.own_resolution = raw.own_resolution;
    state.colormap = colormap_from_name(raw.colormap).value_or(Colormap::viridis);
    state.maps = raw.maps == "keep"        ? session::MapsPolicy::keep
                 : raw.maps == "on-demand" ? session::MapsPolicy::stream
                                           : session::MapsPolicy::automatic;
    state.view = raw.view;
    if (!raw.metric.empty()) state.metric = metric_from_name(raw.metric).value_or(Metric::prev_token);
    // Without --layer / --head, land on the head that does something nameable.
    o.select_showcase_head = cli.count("--layer") == 0 && cli.count("--head") == 0;
    session::StartChoices& choices = o.start_choices;
    if (cli.count("--layer") > 0) choices.layer = state.layer;
    if (cli.count("--head") > 0) choices.head = state.head;
    if (cli.count("--query") > 0) choices.query = state.query;
    choices.text_given = cli.count("--text") > 0 || cli.count("--tokens") > 0;
    choices.image_given = cli.count("--image") > 0;
    choices.target_given = cli.count("--target") + cli.count("--target-tokens") + cli.count("--generate") > 0;
    choices.kind_given = state.kind != session::AttentionKind::decoder;
    const bool harness = !o.screenshot_path.empty() || o.bench_frames > 0 || o.test_mode;
    if (!harness) o.last_session = session::last_session_path();
    std::string session_file = raw.session;
    if (restores_last_session(cli, o, raw) && !o.last_session.empty() && std::filesystem::exists(o.last_session)) {
        try {
            state = session::open_session(o.last_session, state);
            session_file = o.last_session;
        } catch (const Error& e) {
            // Never a reason not to start: the demo instead, and the line saying why.
            std::fprintf(stderr, "headscope: the last session was not restored (%s)\n", e.what());
        }
    }
    if (!session_file.empty()) {
        // Its choices stand as saved: no showcase head. (It holds a sentence and a picture
        // whatever the model reads: neither is a choice to note as unused.)
        if (session_file == raw.session) state = session::open_session(raw.session, state);
        // What the session does not decide for itself, or a flag given beside it on purpose.
        if (cli.count("--view") > 0) state.view = raw.view;
        if (cli.count("--colormap") > 0) state.colormap = colormap_from_name(raw.colormap).value_or(state.colormap);
        o.select_showcase_head = false;
        choices.layer = state.layer;
        choices.head = state.head;
        if (state.query >= 0) choices.query = state.query;
    }
    apply_view_flags(raw, state);
}

}   // namespace

ParsedOptions parse_options(int argc, char** argv, HarnessModes* modes) {
    GuiOptions o;
    // A first launch opens on the trained text model (assets/models/tiny-story), whose
    // heads were learned, on a sentence that says a phrase twice: its induction head shows.
    o.state.model.name = "builtin:tiny-story";
    o.state.text = default_sentence();
    o.state.image_path = (assets_dir() / "shapes.png").string();
    RawFlags raw;
    CLI::App cli("Headscope: see what every attention head attends to", "headscope");
    cli.set_version_flag("--version", "headscope " HEADSCOPE_VERSION);
    add_input_options(cli, o, raw);
    add_encoder_decoder_options(cli, o, raw);
    add_view_options(cli, o, raw);
    add_harness_options(cli, o);
    if (modes != nullptr) modes->add_options(cli);
    try {
        cli.parse(argc, argv);
        check_combinations(cli, o, raw);
        o.test_mode = modes != nullptr && modes->chosen();
        if (o.test_mode) modes->check(o);
        apply_flags(cli, o, raw);   // reads --session's file
    } catch (const CLI::CallForHelp& e) {
        return {std::nullopt, cli.exit(e)};
    } catch (const CLI::CallForVersion& e) {
        return {std::nullopt, cli.exit(e)};
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "headscope: %s (see headscope --help)\n", e.what());
        return {std::nullopt, 2};
    } catch (const Error& e) {
        std::fprintf(stderr, "headscope: %s\n", e.what());
        return {std::nullopt, 2};
    }
    return {std::move(o), 0};
}

}   // namespace headscope::gui
