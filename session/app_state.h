#pragma once
// What the user chose in the window, and the transitions the controls make on it.
// No GL or ImGui here, so the transitions are unit-tested without a window.

#include "core/analysis/head_metrics.h"
#include "core/render/colormap.h"
#include "session/attention_kind.h"
#include "session/request.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headscope::session {

// How weights map to colours: one 0..1 scale for every map, each head's own max, or
// logarithmic (small weights visible).
enum class HeatScale { shared, per_head, log };

struct AppState {
    ModelChoice model;
    std::string text;
    // The sentence box holds token ids, not text (--tokens, or the box's "Token ids" tick):
    // a checkpoint with a tokenizer reads them as ids too.
    bool text_is_ids = false;
    std::string image_path;
    // Zero-shot models (CLIP): the labels the picture is scored against, one per line, as
    // text or (labels_are_ids) each line token ids. Kept for the next such model by any other.
    std::string labels;
    bool labels_are_ids = false;
    // Whether image_path is the demo picture the app chose (it then follows the demo
    // model: suit_demo_picture), not one the user asked for, even the same file.
    bool image_is_demo = true;
    // Encoder-decoder models (T5, BART): the text or ids above are the source; the decoder
    // reads `target` (text, or token ids with target_is_ids: the start token first) or, with
    // no target, the `generate` tokens greedy decoding gives (the Generate button); with
    // neither, its start token alone. Kept for the next such model by any other, which
    // runs without them.
    std::string target;
    bool target_is_ids = false;
    int generate = 0;
    // Which of an encoder-decoder's attentions the views show (any other model: decoder,
    // its own). The layer, head and pinned query are the kind's; the step slider is the
    // pinned query over the target.
    AttentionKind kind = AttentionKind::decoder;
    std::optional<bool> causal;                // the causal mask; unset: the model's default (GPT-2: on)
    MapsPolicy maps = MapsPolicy::automatic;   // keep every map, or stream them (--maps)
    bool own_resolution = false;               // image checkpoints: run at the picture's own size
    HeadMask disabled_heads;                   // [L][H]: ablated (zero context), recomputes
    // Encoder-decoder models: the encoder's heads ([encoder layers][H]) and the
    // cross-attention's ([L][H]) switched off; disabled_heads are the decoder's own.
    HeadMask disabled_encoder_heads;
    HeadMask disabled_cross_heads;
    HeadMask hidden_heads;   // [L][H]: left out of the views only
    int layer = 0;
    int head = 0;
    int query = -1;                // pinned query row (-1: none; image view: [CLS])
    std::string view = "matrix";   // the shown view's --view name (ui/views/view_list.h)
    // Each view's own settings (its zoom, mode and options), a JSON object's text by
    // --view name (session/view_settings.h), as the view gives them (View::settings): what
    // a session file keeps of the views. Set here (a session opened, a command-line flag),
    // the window hands them to their views (View::restore).
    std::map<std::string, std::string> view_settings;
    Colormap colormap = Colormap::viridis;
    HeatScale scale = HeatScale::shared;
    std::vector<std::pair<int, int>> forbidden;   // the custom mask: (query, key) pairs, sorted
    // The metric (core/analysis/head_metrics.h) the Heads view plots and the Model grid
    // colours / sorts by: one choice the two views share.
    Metric metric = Metric::prev_token;
};

// What the shown view needs computed beyond the maps (each view says: ui/views/view.h).
struct ViewNeeds {
    bool stages_of_layer = false;     // every stage (q, k, v, scores...) of the selected layer
    std::vector<RunVariant> runs{};   // runs beside the main one (run_variant.h)
};

// The computation the state asks for, with what the shown view needs.
Request make_request(const AppState& state, const ViewNeeds& needs = {});

// The labels box's lines, each trimmed, the empty ones left out.
std::vector<std::string> label_lines(const std::string& labels);

// Whether the causal mask is on: the user's choice, else the model's default.
bool causal_on(const AppState& state, const ModelInfo& info);

// Model names: "builtin:..." names a demo model, anything else a checkpoint folder.
bool is_builtin_model(const std::string& name);
// How a model is named in the window: built-in names as they are, folders by their last part.
std::string model_display_name(const std::string& name);

// Opening another model (the Model control, --model, a dropped folder): the pinned
// query, the causal choice, the heads switched off and the custom mask belong to the
// old model, so they reset (leave_model_choices).
// The picture follows too while it is one of the demo pictures (suit_demo_picture).
void choose_model(AppState& state, const std::string& name);
// builtin:tiny-shapes knows only its own 64 px scenes: while the picture is the app's
// demo picture (assets/shapes.png) it gets a scene of its own (assets/scenes/star.png),
// and any other model gets the demo picture back. A picture the user chose stays, even
// one of those two files.
void suit_demo_picture(AppState& state);
// The user's own picture (--image, typed, picked or dropped): it stays across models.
void choose_picture(AppState& state, const std::string& path);
// After a load was cancelled or failed: back to the model the worker still holds (the
// default built-in model when none loaded yet).
void return_to_model(AppState& state, const std::optional<ModelChoice>& in_use);

// A model of another shape is in: the heads switched off and the custom mask, chosen for
// the last one's heads and positions, are let go (all heads on, no pairs forbidden).
void leave_model_choices(AppState& state);

// What the command line chose before any model was known, checked against the model once
// its first result is in: a choice that does not fit is clamped or left out by the
// window (it still opens), and says so.
struct StartChoices {
    std::optional<int> layer;
    std::optional<int> head;
    std::optional<int> query;
    std::vector<std::pair<std::int64_t, std::int64_t>> disabled;   // --disable's LAYER.HEAD pairs
    // --disable-encoder-heads' and --disable-cross-heads' pairs (T5, BART)
    std::vector<std::pair<std::int64_t, std::int64_t>> disabled_encoder;
    std::vector<std::pair<std::int64_t, std::int64_t>> disabled_cross;
    bool text_given = false;     // --text or --tokens
    bool image_given = false;    // --image
    bool target_given = false;   // --target, --target-tokens or --generate
    bool kind_given = false;     // --kind other than decoder
};
// One line per choice that does not fit `info` (its layers and T positions those of `kind`,
// the kind shown), naming the flag, what the model has, and what the window shows
// instead; empty when all fit.
std::vector<std::string> start_choice_notes(const StartChoices& choices, const ModelInfo& info, AttentionKind kind,
                                            Eigen::Index T);

// After a model (re)loads: per-head flags sized [L][H] (kept where they still fit,
// unset elsewhere), and the layer and head clamped into range (each view fits its own
// settings: View::fit_to_model).
void fit_to_model(AppState& state, Eigen::Index n_layers, Eigen::Index n_heads);
// The same for every kind of `info`'s heads (an encoder-decoder's encoder and cross flags
// too), back to the decoder kind for a model without the one chosen, and the layer clamped
// into the chosen kind's.
void fit_to_model(AppState& state, const ModelInfo& info);

// The heads switched off in the kind shown (AppState::kind): what the head toggles, the
// Model grid and the Heads view act on.
HeadMask& kind_disabled_heads(AppState& state);
const HeadMask& kind_disabled_heads(const AppState& state);
// Another kind shown (the Attention control): the layer clamped into its layers; the
// pinned query let go when its rows are other tokens (the encoder's are the source's,
// the decoder's and cross's the target's); a metric the kind lacks (cross-attention has no
// position metrics, self-attention no monotonicity) becomes one it has. A kind `info`'s
// model lacks is not chosen.
void choose_kind(AppState& state, AttentionKind kind, const ModelInfo& info);
// The pinned query as a row of the decoder's own input (the predictions' row): -1 in the
// encoder kind, whose rows are the source's.
int decoder_query(const AppState& state);

// The head a first look should land on: the one whose measured role
// (core/analysis/head_roles.h) is the most nameable, an induction head before a previous-token
// head before the rest, then by score. `metrics` is [L * H], layer-major. Absent when
// no head has a name: the selection is left alone.
struct HeadIndex {
    int layer = 0;
    int head = 0;
};
std::optional<HeadIndex> showcase_head(const std::vector<HeadMetrics>& metrics, Eigen::Index n_heads, bool images);
// A result of `n_tokens` positions (the same model may give another length: a new
// sentence, own resolution on or off): a pinned query past the end is let go.
void fit_to_length(AppState& state, int n_tokens);

// Keyboard steps, clamped to the model's range.
void step_layer(AppState& state, int delta, Eigen::Index n_layers);
void step_head(AppState& state, int delta, Eigen::Index n_heads);

// Switches head (layer, head) of the kind shown (kind_disabled_heads) off or back on.
void toggle_disabled(AppState& state, int layer, int head);

// The custom mask editor: forbid or allow one (query, key) pair; clear; invert over a
// T x T matrix (every allowed pair becomes forbidden and the other way round).
void set_forbidden(AppState& state, int query, int key, bool forbidden);
bool is_forbidden(const AppState& state, int query, int key);
void clear_mask(AppState& state);
void invert_mask(AppState& state, int n_tokens);

// A dropped or typed file: image files switch a text model to builtin:toy-vit.
// Returns false (and changes nothing) for a file that is not an image by its name.
bool open_dropped_file(AppState& state, const std::string& path);

}   // namespace headscope::session
