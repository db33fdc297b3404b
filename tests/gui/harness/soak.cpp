#include "tests/gui/harness/soak.h"

#include "core/base/error.h"
#include "core/models/model_registry.h"
#include "session/view_settings.h"
#include "ui/views/view_list.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace headscope::gui {

using namespace session;

namespace {

using Clock = std::chrono::steady_clock;

// A computation the worker (or a background job) has not finished after this long, or a
// frame that has not ended after this long, is a hang: the slowest real step here (a
// load of tests/checkpoints, a toy model at 512 tokens) takes well under a second.
constexpr int hang_seconds = 60;

// RSS may grow by at most this much from the warm-up sample (after 10% of the actions)
// to the end. Both samples are taken in the same state (the run's first model, input and
// view, settled, free heap pages given back with malloc_trim), so what remains is what
// the actions left behind plus what is kept by design and bounded: the background jobs'
// last 16 results, one texture per view key, the worker's model and last run, the
// largest frame's ImGui buffers, allocator fragmentation. Measured here (Release, 1,000
// to 3,000 actions, seeds 1-9): +3 to +14 MiB, with no trend in the run's length. A leak
// of one thing per action lands far above it; made on purpose for a run of 1,000:
// one result (Snapshot) per answer +483 MiB, one GL texture per upload +72 MiB, one
// model per load +70 MiB.
constexpr double rss_growth_bound_mib = 32.0;

double resident_mib() {
    std::ifstream statm("/proc/self/statm");
    long size = 0;
    long resident = 0;
    statm >> size >> resident;
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
    return true;   // ASan's quarantine holds freed memory: RSS says nothing; LeakSanitizer checks at exit
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

// What is on screen that should never be NaN or infinite: every head's weights (the
// heatmaps), the logits (the predictions panel) and the per-head metrics (Heads view,
// Model grid), of every trace a snapshot carries. Empty when all are finite.
std::string first_non_finite(const Snapshot& s) {
    const auto check = [](const ModelTrace& trace, const char* which) -> std::string {
        for (std::size_t l = 0; l < trace.layers.size(); ++l) {
            for (std::size_t h = 0; h < trace.layers[l].heads.size(); ++h) {
                if (!trace.layers[l].heads[h].weights.allFinite()) {
                    return std::string("the weights of head ") + std::to_string(l) + "." + std::to_string(h) + " (" +
                           which + ")";
                }
            }
        }
        if (!trace.logits.get().allFinite()) return std::string("the logits (") + which + ")";
        return {};
    };
    std::string what = check(s.trace, "the run on screen");
    if (what.empty() && s.intact) what = check(*s.intact, "every head on");
    for (const auto& [name, run] : s.variants) {
        if (what.empty() && run.trace) what = check(*run.trace, name.c_str());
    }
    for (const HeadMetrics& m : s.metrics) {
        if (!what.empty()) break;
        const double values[] = {m.entropy,   m.entropy_norm, m.mean_distance, m.max_weight, m.top_k_mass,
                                 m.sink_mass, m.special_mass, m.diag,          m.prev_token, m.induction.value_or(0.0)};
        for (const double v : values) {
            if (!std::isfinite(v)) {
                what = "a metric of head " + std::to_string(m.layer) + "." + std::to_string(m.head);
                break;
            }
        }
    }
    return what;
}

std::vector<std::string> files_in(const std::filesystem::path& folder, bool folders) {
    std::vector<std::string> found;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) == folders) found.push_back(it->path().string());
    }
    std::sort(found.begin(), found.end());   // the same run for the same seed
    return found;
}

}   // namespace

SoakFiles find_soak_files(const std::filesystem::path& root, const std::filesystem::path& scratch) {
    SoakFiles files;
    for (const char* folder : {"assets", "assets/scenes", "tests/images"}) {
        for (const std::string& path : files_in(root / folder, false)) {
            AppState probe;   // the same test of "an image by its name" the drop callback makes
            if (open_dropped_file(probe, path)) files.good_images.push_back(path);
        }
    }
    files.bad_images = files_in(root / "tests/images/broken", false);
    std::error_code ec;
    std::filesystem::create_directories(scratch, ec);
    const std::string pipe = (scratch / "pipe.png").string();
    if (!ec && mkfifo(pipe.c_str(), 0600) == 0) files.bad_images.push_back(pipe);
    for (const std::string& path : files_in(root / "tests/checkpoints", true)) {
        if (std::filesystem::path(path).filename() != "bad") files.good_models.push_back(path);
    }
    files.bad_models = files_in(root / "tests/checkpoints/bad", true);
    files.not_files = {
        (root / "tests/images").string(),        // a folder, no model in it
        (root / "tests/checkpoints").string(),   // a folder of model folders
        (root / "README.md").string(),           // a file that is not an image
        "/no/such/folder/picture.png",           // missing
        "/no/such/model/folder",                 // missing, no extension
        "/tmp/\xff\xfe-not-utf8.png",            // a name that is not UTF-8
        "",
    };
    return files;
}

namespace {

// The window as the controls see it: its state and the public entry points the widgets
// and the drop callback call, and nothing else.
class SoakControls {
public:
    explicit SoakControls(ui::AppWindow& app) : app_(app) {}

    AppState& state() { return app_.state(); }
    // The result on screen while it is the chosen model's: the keys and the layer / head
    // controls act only then (AppWindow::handle_keys, the controls panel).
    const Snapshot* shown() const { return app_.showing_chosen_model() ? app_.shown() : nullptr; }
    const Snapshot* any_shown() const { return app_.shown(); }
    bool settled() const { return app_.settled(); }
    const std::string& error() const { return app_.error(); }

    // The Model list, the Open... picker.
    void open_model(const std::string& name) { app_.open_model(name); }
    // The drop callback.
    void drop(const std::string& path) { app_.on_drop(path); }
    // The image path field, then Enter (shown for image models only).
    void type_image_path(const std::string& path) { app_.open_picture(path); }
    // A view's own controls (its mode, options, input B): the settings they set, through
    // the one interface sessions use; a view refusing what its controls could set fails.
    void set_view(const std::string& view, const SettingsWriter& fields) {
        if (!app_.restore_view(view, fields.text())) {
            throw Error("the " + view + " view refused its own settings " + fields.text());
        }
    }
    // Esc / Cancel while a model loads.
    void cancel_loading() {
        if (app_.loading()) app_.cancel_loading();
    }
    // The Heads view's "Scan head importance".
    void scan_importance() {
        if (shown()) app_.start_importance_scan();
    }

private:
    ui::AppWindow& app_;
};

// One action: its random numbers are drawn before it runs (so the seed fixes the
// sequence of actions and numbers whatever the timing), then mapped onto the state.
struct Ctx {
    SoakControls& ui;
    const SoakFiles& files;
    const AppState& initial;
    std::array<std::uint64_t, 3> r;
    std::string note;   // what exactly it did, for the log

    int pick(std::size_t i, int n) const { return n <= 0 ? 0 : static_cast<int>(r[i] % static_cast<std::uint64_t>(n)); }
    const std::string& pick(std::size_t i, const std::vector<std::string>& list) const {
        static const std::string none = "/no/such/file";
        return list.empty() ? none : list[static_cast<std::size_t>(pick(i, static_cast<int>(list.size())))];
    }
    AppState& state() { return ui.state(); }
    int n_tokens() const { return ui.shown() ? static_cast<int>(ui.shown()->input.labels.size()) : 0; }
    int n_layers() const { return ui.shown() ? static_cast<int>(ui.shown()->info.n_layers) : 0; }
    int n_heads() const { return ui.shown() ? static_cast<int>(ui.shown()->info.n_heads) : 0; }
};

const std::vector<std::string> words = {"the", "cat",    "sat",   "on",     "mat",    "dog",   "ran",   ".",
                                        ",",   "tired",  "Hello", "there",  "[MASK]", "[SEP]", "naïve", "café",
                                        "猫",  "日本語", "🙂",  "Zürich", "it's",   "12345", "--",    "?!"};
// Characters of 2, 3 and 4 bytes, a combining accent, a zero-width space, an emoji ZWJ sequence.
const std::vector<std::string> utf8_characters = {"é",          "ß", "Ω", "猫", "🙂", "e\xcc\x81", "\xe2\x80\x8b",
                                                  "👩‍💻"};
// Bytes that are no UTF-8: a stray lead byte, truncated sequences, a surrogate, an
// overlong '/', a lone continuation byte, a code point past U+10FFFF.
const std::vector<std::string> invalid_utf8 = {"\xff",     "\xc3", "\xe2\x82",        "\xed\xa0\x80",
                                               "\xc0\xaf", "\x80", "\xf4\x90\x80\x80"};

// Backspace as a text field does it: the last whole character (UTF-8 sequence).
void backspace(std::string& text) {
    if (text.empty()) return;
    std::size_t end = text.size() - 1;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text.erase(end);
}

std::string long_paste(std::uint64_t seed) {
    std::mt19937_64 random(seed);
    const std::size_t length = 2000 + random() % 5000;   // 2,000 .. 7,000 bytes: under and over toy-text's 512 tokens
    std::string text;
    while (text.size() < length) {
        text += words[random() % words.size()];
        text += random() % 7 == 0 ? "\n" : " ";
    }
    return text;
}

using Apply = void (*)(Ctx&);
struct Action {
    const char* name;
    int weight;   // how often, relative to the others
    Apply apply;
};

// Every action the soak takes. Each goes through what a control does: an AppState
// transition (app_state.h), a field edited the way its widget edits it, or an AppWindow
// entry point (open_model, the drop callback, Esc, a button).
const std::vector<Action> actions = {
    // Typing in the Sentence field.
    {"type a word", 6, [](Ctx& c) { c.state().text += (c.pick(1, 4) ? " " : "") + (c.note = c.pick(0, words)); }},
    {"type a character", 4, [](Ctx& c) { c.state().text += static_cast<char>(32 + c.pick(0, 95)); }},
    {"type a UTF-8 character", 4, [](Ctx& c) { c.state().text += c.note = c.pick(0, utf8_characters); }},
    {"backspace", 5,
     [](Ctx& c) {
         for (int n = 0; n <= c.pick(0, 3); ++n) backspace(c.state().text);
     }},
    {"insert bytes that are not UTF-8", 2,
     [](Ctx& c) {
         std::string& text = c.state().text;
         text.insert(static_cast<std::size_t>(c.pick(1, static_cast<int>(text.size()) + 1)), c.pick(0, invalid_utf8));
     }},
    {"clear the sentence", 1, [](Ctx& c) { c.state().text.clear(); }},
    {"whitespace only", 1,
     [](Ctx& c) {
         static const std::vector<std::string> blanks = {" ", "   \t ", "\n\n", "\t", "\xe2\x80\x83"};
         c.state().text = c.pick(0, blanks);
     }},
    {"paste a long text", 1,
     [](Ctx& c) {
         c.state().text = long_paste(c.r[0]);
         c.note = std::to_string(c.state().text.size()) + " bytes";
     }},
    {"the first sentence again", 2, [](Ctx& c) { c.state().text = c.initial.text; }},

    // Heads and the custom mask.
    {"toggle a head (disable)", 5,
     [](Ctx& c) {
         // Sometimes one past either end: toggle_disabled must ignore it.
         const int l = c.pick(0, c.n_layers() + 2) - 1;
         const int h = c.pick(1, c.n_heads() + 2) - 1;
         toggle_disabled(c.state(), l, h);
         c.note = std::to_string(l) + "." + std::to_string(h);
     }},
    {"show / hide a head", 2,
     [](Ctx& c) {
         HeadMask& flags = c.state().hidden_heads;
         if (!c.ui.shown() || flags.layers() != c.n_layers() || flags.heads() == 0) return;
         flags.toggle(c.state().layer, c.pick(0, static_cast<int>(flags.heads())));
     }},
    {"forbid a pair", 3,
     [](Ctx& c) { set_forbidden(c.state(), c.pick(0, c.n_tokens() + 2), c.pick(1, c.n_tokens() + 2), true); }},
    {"allow a pair", 2,
     [](Ctx& c) { set_forbidden(c.state(), c.pick(0, c.n_tokens() + 2), c.pick(1, c.n_tokens() + 2), false); }},
    {"forbid a whole row", 1,
     [](Ctx& c) {
         const int q = c.pick(0, c.n_tokens());
         for (int k = 0; k < c.n_tokens(); ++k) set_forbidden(c.state(), q, k, true);
     }},
    {"invert the mask", 1,
     [](Ctx& c) {
         if (c.ui.shown()) invert_mask(c.state(), c.n_tokens());
     }},
    {"clear the mask", 1, [](Ctx& c) { clear_mask(c.state()); }},
    {"edit mask on or off", 1,
     [](Ctx& c) { c.ui.set_view("matrix", SettingsWriter().set("edit_mask", c.pick(0, 2) == 1)); }},

    // Layers, heads, positions (the keys, the slider, the radio buttons, clicks).
    {"layer up / down (key)", 4,
     [](Ctx& c) {
         if (c.ui.shown()) step_layer(c.state(), c.pick(0, 2) ? 1 : -1, c.n_layers());
     }},
    {"head left / right (key)", 4,
     [](Ctx& c) {
         if (c.ui.shown()) step_head(c.state(), c.pick(0, 2) ? 1 : -1, c.n_heads());
     }},
    {"layer slider, head button", 2,
     [](Ctx& c) {
         if (!c.ui.shown()) return;
         c.state().layer = c.pick(0, c.n_layers());
         c.state().head = c.pick(1, c.n_heads());
     }},
    {"pin a query (click a token or patch)", 3,
     [](Ctx& c) {
         if (c.ui.shown()) c.state().query = c.pick(0, c.n_tokens() + 1) - 1;
     }},
    {"causal mask (C)", 3,
     [](Ctx& c) {
         if (c.ui.shown()) c.state().causal = !causal_on(c.state(), c.ui.shown()->info);
     }},

    // Views and how they draw.
    {"switch view (tab)", 8,
     [](Ctx& c) {
         const auto views = ui::make_views();
         c.state().view =
             std::string(views[static_cast<std::size_t>(c.pick(0, static_cast<int>(views.size())))]->name());
         c.note = c.state().view;
     }},
    {"colour map", 2,
     [](Ctx& c) {
         constexpr Colormap maps[] = {Colormap::viridis, Colormap::magma, Colormap::cividis, Colormap::greys};
         c.state().colormap = maps[c.pick(0, 4)];
     }},
    {"scale (0..1, head max, log)", 2, [](Ctx& c) { c.state().scale = static_cast<HeatScale>(c.pick(0, 3)); }},
    {"compare mode", 2,
     [](Ctx& c) {
         constexpr const char* modes[] = {"two_heads", "two_layers", "mask_on_off", "ablation_on_off", "two_inputs"};
         c.ui.set_view("compare", SettingsWriter().set("mode", modes[c.pick(0, 5)]));
     }},
    {"compare: head B", 1,
     [](Ctx& c) {
         if (!c.ui.shown()) return;
         c.ui.set_view("compare", SettingsWriter()
                                      .set("b_layer", c.pick(0, c.n_layers()))
                                      .set("b_head", c.pick(1, c.n_heads()))
                                      .set("b_chosen", true));
     }},
    {"compare: input B sentence", 1,
     [](Ctx& c) {
         const std::string b = c.pick(1, 4) == 0 ? std::string() : c.pick(0, words) + " " + c.initial.text;
         c.ui.set_view("compare", SettingsWriter().set("text_b", b));
     }},
    {"compare: input B picture", 1,
     [](Ctx& c) {
         c.note = c.pick(1, 3) == 0 ? c.pick(0, c.files.bad_images) : c.pick(0, c.files.good_images);
         c.ui.set_view("compare", SettingsWriter().set("image_b", c.note));
     }},
    {"metric, grid colour / sort", 1,
     [](Ctx& c) {
         c.state().metric = static_cast<Metric>(c.pick(0, metric_count));
         c.ui.set_view(
             "model",
             SettingsWriter().set("colour_by_metric", c.pick(1, 2) == 1).set("sort_by_metric", c.pick(2, 2) == 1));
     }},
    {"grid by importance", 1,
     [](Ctx& c) { c.ui.set_view("model", SettingsWriter().set("importance", c.pick(0, 2) == 1)); }},
    {"scan head importance", 1, [](Ctx& c) { c.ui.scan_importance(); }},
    {"rollout settings", 1,
     [](Ctx& c) {
         if (!c.ui.shown()) return;
         // As the rollout view's combo and sliders clamp them.
         constexpr const char* fusions[] = {"mean", "max", "min"};
         const int start = c.pick(2, c.n_layers());
         const int end = std::max(start, c.pick(0, c.n_layers()));
         c.ui.set_view("rollout", SettingsWriter()
                                      .set("fusion", fusions[c.pick(0, 3)])
                                      .set("discard_ratio", static_cast<double>(c.pick(1, 100)) / 100.0)
                                      .set("start_layer", start)
                                      .set("end_layer", end == c.n_layers() - 1 ? -1 : end));
     }},
    {"rollout row", 1,
     [](Ctx& c) {
         if (c.ui.shown()) c.ui.set_view("rollout", SettingsWriter().set("row", c.pick(0, c.n_tokens() + 1) - 1));
     }},
    {"image view: column / average / keep", 2,
     [](Ctx& c) {
         c.ui.set_view("image", SettingsWriter()
                                    .set("column", c.pick(0, 2) == 1)
                                    .set("average", c.pick(1, 2) == 1)
                                    .set("keep_mass", c.pick(2, 2) == 1)
                                    .set("keep_mass_share", static_cast<double>(1 + c.pick(0, 99)) / 100.0));
     }},
    {"own resolution", 1,
     [](Ctx& c) {
         if (!c.ui.shown() || is_toy_model(c.ui.shown()->model.name)) return;   // the checkbox is not there
         c.state().own_resolution = !c.state().own_resolution;
     }},

    // Files: dropped on the window, or typed in the image field.
    {"drop a good image", 4, [](Ctx& c) { c.ui.drop(c.note = c.pick(0, c.files.good_images)); }},
    {"drop a broken image", 3, [](Ctx& c) { c.ui.drop(c.note = c.pick(0, c.files.bad_images)); }},
    {"drop a folder, a missing path, a text file", 2, [](Ctx& c) { c.ui.drop(c.note = c.pick(0, c.files.not_files)); }},
    {"drop a model folder", 1,
     [](Ctx& c) {
         c.ui.drop(c.note = c.pick(1, 3) == 0 ? c.pick(0, c.files.bad_models) : c.pick(0, c.files.good_models));
     }},
    {"type an image path", 2,
     [](Ctx& c) {
         const int kind = c.pick(1, 4);
         c.note = kind == 0   ? c.pick(0, c.files.bad_images)
                  : kind == 1 ? c.pick(0, c.files.not_files)
                              : c.pick(0, c.files.good_images);
         c.ui.type_image_path(c.note);
     }},

    // Models: the Model list (built-in), recent / Open... (folders), Esc, the toy settings.
    {"open a built-in model", 4,
     [](Ctx& c) {
         const std::vector<BuiltinModel> builtin = builtin_models();
         c.ui.open_model(c.note = builtin[static_cast<std::size_t>(c.pick(0, static_cast<int>(builtin.size())))].name);
     }},
    {"open a good checkpoint folder", 3, [](Ctx& c) { c.ui.open_model(c.note = c.pick(0, c.files.good_models)); }},
    {"open a bad checkpoint folder", 3, [](Ctx& c) { c.ui.open_model(c.note = c.pick(0, c.files.bad_models)); }},
    {"open a folder that is not a model", 1, [](Ctx& c) { c.ui.open_model(c.note = c.pick(0, c.files.not_files)); }},
    {"cancel loading (Esc)", 1, [](Ctx& c) { c.ui.cancel_loading(); }},
    {"toy model settings", 2,
     [](Ctx& c) {
         if (!is_toy_model(c.state().model.name)) return;   // shown for the built demo models only
         ToyConfig& config = c.state().model.config;
         // E, H, L: the default, other good sizes, and bad ones (H not dividing E, a head
         // width of 1, no layers).
         constexpr std::array<std::array<int, 3>, 7> sizes = {
             {{64, 4, 2}, {32, 2, 1}, {48, 4, 3}, {96, 6, 2}, {64, 3, 2}, {8, 8, 1}, {64, 4, 0}}};
         const auto& size = sizes[static_cast<std::size_t>(c.pick(0, static_cast<int>(sizes.size())))];
         config.width = size[0];
         config.n_heads = size[1];
         config.n_layers = size[2];
         config.seed = static_cast<std::uint64_t>(c.pick(1, 4));
         config.init = c.pick(2, 3) == 0 ? ToyInit::random : ToyInit::structured;
         c.note = std::to_string(size[0]) + "," + std::to_string(size[1]) + "," + std::to_string(size[2]);
     }},
};

const Action& pick_action(std::uint64_t r) {
    int total = 0;
    for (const Action& a : actions) total += a.weight;
    int at = static_cast<int>(r % static_cast<std::uint64_t>(total));
    for (const Action& a : actions) {
        if (at < a.weight) return a;
        at -= a.weight;
    }
    return actions.back();
}

// Back to the state the run started in (for the memory samples): the first model, its
// input and view, nothing disabled or masked.
void return_to_start(SoakControls& ui, const AppState& initial) {
    ui.open_model(initial.model.name);
    AppState& s = ui.state();
    s.model.config = initial.model.config;
    s.text = initial.text;
    s.image_path = initial.image_path;
    s.image_is_demo = initial.image_is_demo;
    s.causal = initial.causal;
    s.own_resolution = initial.own_resolution;
    s.disabled_heads.enable_all();
    s.hidden_heads.enable_all();
    s.query = -1;
    s.view = initial.view;
    s.colormap = initial.colormap;
    s.scale = initial.scale;
    s.forbidden.clear();
    ui.set_view("matrix", SettingsWriter().set("edit_mask", false));
    ui.set_view("compare", SettingsWriter().set("mode", "two_heads").set("text_b", "").set("image_b", ""));
}

}   // namespace

SoakDriver::SoakDriver(ui::AppWindow& app, SoakOptions options)
    : app_(app), options_(std::move(options)), files_(find_soak_files(options_.root, options_.scratch)),
      random_(options_.seed), started_(Clock::now()), watch_thread_([this] { watchdog(); }) {
    SoakControls ui(app_);
    initial_ = ui.state();
    warm_up_ = std::max(1, options_.n_actions / 10);
    current_action_ = "waiting for the first model";
}

SoakDriver::~SoakDriver() {
    {
        std::lock_guard lock(watch_mutex_);
        stop_watch_ = true;
    }
    watch_wake_.notify_all();
    watch_thread_.join();
}

bool SoakDriver::after_frame() {
    ++frames_;
    heartbeat_.store(frames_);
    if (failure_ != SoakFailure::none) return true;
    SoakControls ui(app_);
    const bool settled = ui.settled();
    if (const std::string& error = ui.error(); error != last_error_) {
        if (!error.empty()) ++errors_shown_;
        last_error_ = error;
    }
    check_shown();
    if (failure_ != SoakFailure::none || check_hang(settled)) return true;
    switch (phase_) {
    case Phase::first_model:
        if (settled) phase_ = Phase::actions;
        return false;
    case Phase::actions:
        // The last action has been drawn for a frame; some wait for their result too.
        if (wait_for_result_ && !settled) return false;
        if ((done_ == warm_up_ && !sampled_warm_up_) || done_ >= options_.n_actions) {
            return_to_start(ui, initial_);
            history_.push_back("(back to the first model for the memory sample)");
            frames_settled_ = 0;
            phase_ = Phase::settle_for_sample;
            return false;
        }
        perform_next_action();
        return false;
    case Phase::settle_for_sample:
        // A few settled frames: the result and its textures are drawn, the views' jobs done.
        frames_settled_ = settled ? frames_settled_ + 1 : 0;
        if (frames_settled_ < 3) return false;
        take_memory_sample();
        phase_ = done_ >= options_.n_actions ? Phase::done : Phase::actions;
        return phase_ == Phase::done;
    case Phase::done: return true;
    }
    return true;
}

void SoakDriver::perform_next_action() {
    // Drawn in a fixed order whatever the action uses: the seed fixes the run.
    const std::uint64_t which = random_();
    const std::array<std::uint64_t, 3> r = {random_(), random_(), random_()};
    const bool wait = random_() % 4 != 0;   // 3 in 4 wait for their result; the rest pile up
    const Action& action = pick_action(which);
    SoakControls ui(app_);
    Ctx ctx{ui, files_, initial_, r, {}};
    {
        std::lock_guard lock(watch_mutex_);
        current_action_ = "action " + std::to_string(done_ + 1) + " (" + action.name + ")";
    }
    action.apply(ctx);
    ++done_;
    wait_for_result_ = wait;
    std::string line = std::to_string(done_) + ": " + action.name;
    if (!ctx.note.empty()) line += " [" + ctx.note + "]";
    history_.push_back(std::move(line));
    while (history_.size() > 12) history_.pop_front();
}

void SoakDriver::check_shown() {
    SoakControls ui(app_);
    const Snapshot* shown = ui.any_shown();
    if (!shown || shown->generation == checked_generation_) return;
    checked_generation_ = shown->generation;
    if (const std::string what = first_non_finite(*shown); !what.empty()) {
        fail(SoakFailure::not_finite, what + " of " + shown->info.name + " is not finite (NaN or inf) on screen");
    }
}

bool SoakDriver::check_hang(bool settled) {
    const auto now = Clock::now();
    if (settled) {
        was_settled_ = true;
        return false;
    }
    if (was_settled_) {
        was_settled_ = false;
        unsettled_since_ = now;
    }
    if (now - unsettled_since_ < std::chrono::seconds(hang_seconds)) return false;
    fail(SoakFailure::hang, "the requested computation did not finish in " + std::to_string(hang_seconds) +
                                " s (worker or background job); the last actions were:" + recent_actions());
    return true;
}

void SoakDriver::take_memory_sample() {
#if defined(__GLIBC__)
    malloc_trim(0);   // give back free heap pages: what stays resident is what is still allocated
#endif
    const double rss = resident_mib();
    if (!sampled_warm_up_) {
        sampled_warm_up_ = true;
        rss_warm_up_mib_ = rss;
        return;
    }
    rss_end_mib_ = rss;
    if (!sanitized_build() && rss_end_mib_ - rss_warm_up_mib_ > rss_growth_bound_mib) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "RSS grew from %.1f MiB after warm-up to %.1f MiB at the end (bound: +%.0f MiB)",
                      rss_warm_up_mib_, rss_end_mib_, rss_growth_bound_mib);
        fail(SoakFailure::memory, text);
    }
}

void SoakDriver::fail(SoakFailure failure, const std::string& message) {
    if (failure_ != SoakFailure::none) return;
    failure_ = failure;
    std::fprintf(stderr, "headscope: soak failed after %d actions: %s\n", done_, message.c_str());
}

void SoakDriver::fail_with_exception(const std::string& what) {
    fail(SoakFailure::exception,
         "an exception escaped the frame: " + what + "; the last actions were:" + recent_actions());
}

std::string SoakDriver::recent_actions() const {
    std::string text;
    for (const std::string& line : history_) text += "\n    " + line;
    return text;
}

int SoakDriver::finish() {
    const double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    char memory[160] = "RSS not sampled (stopped before)";
    if (rss_end_mib_ > 0.0) {
        std::snprintf(memory, sizeof memory,
                      "RSS %.1f MiB after warm-up, %.1f MiB at the end (%+.1f MiB, bound +%.0f MiB%s)",
                      rss_warm_up_mib_, rss_end_mib_, rss_end_mib_ - rss_warm_up_mib_, rss_growth_bound_mib,
                      sanitized_build() ? ", not checked under AddressSanitizer" : "");
    }
    std::printf("headscope: soak %s: %d actions (seed %llu), %ld frames, %d errors shown, %s, %.1f s\n",
                failure_ == SoakFailure::none ? "ok" : "FAILED", done_, static_cast<unsigned long long>(options_.seed),
                frames_, errors_shown_, memory, seconds);
    std::fflush(stdout);
    if (failure_ == SoakFailure::hang) {
        // A thread stuck in a call cannot be joined: leave now, not hang again in its destructor.
        std::error_code ec;
        std::filesystem::remove_all(options_.scratch, ec);
        std::fflush(stderr);
        std::_Exit(static_cast<int>(failure_));
    }
    if (failure_ == SoakFailure::none && done_ < options_.n_actions) {
        std::fprintf(stderr, "headscope: soak stopped after %d of %d actions (the window was closed)\n", done_,
                     options_.n_actions);
        return static_cast<int>(SoakFailure::hang);
    }
    return static_cast<int>(failure_);
}

void SoakDriver::watchdog() {
    std::unique_lock lock(watch_mutex_);
    long last = -1;
    auto since = Clock::now();
    while (!stop_watch_) {
        watch_wake_.wait_for(lock, std::chrono::seconds(1));
        const long beat = heartbeat_.load();
        const auto now = Clock::now();
        if (beat != last) {
            last = beat;
            since = now;
        } else if (!stop_watch_ && now - since > std::chrono::seconds(hang_seconds)) {
            // The UI thread is stuck inside a frame: nothing else can report it.
            std::fprintf(stderr, "headscope: soak failed: no frame for %d s (the UI thread hangs) during %s\n",
                         hang_seconds, current_action_.c_str());
            std::_Exit(static_cast<int>(SoakFailure::hang));
        }
    }
}

}   // namespace headscope::gui
