#include "session/app_state.h"

#include "core/analysis/head_roles.h"
#include "core/models/assets.h"
#include "core/models/model_registry.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace headscope::session {

Request make_request(const AppState& state, const ViewNeeds& needs) {
    Request r;
    r.model = state.model;
    r.input.text = state.text;
    r.input.ids_typed = state.text_is_ids;
    r.input.image_path = state.image_path;
    r.input.labels = label_lines(state.labels);
    r.input.label_ids = state.labels_are_ids;
    r.input.labels_name = state.labels_are_ids ? "labels (token ids)" : "labels";
    r.input.unreadable_labels_left_out = true;
    // The built demo ViT has no own resolution (its positions are built for 224 px): never ask it.
    r.input.image_options.own_resolution = state.own_resolution && !is_toy_model(state.model.name);
    r.causal = state.causal;
    r.maps = state.maps;
    r.keeps.logits_when_shown = true;
    // Flags that switch nothing off are asked as none: the flags are sized to the model
    // once its first result is in, and that alone must not look like a new computation.
    if (state.disabled_heads.any()) r.disabled_heads = state.disabled_heads;
    if (state.disabled_encoder_heads.any()) r.disabled_encoder_heads = state.disabled_encoder_heads;
    if (state.disabled_cross_heads.any()) r.disabled_cross_heads = state.disabled_cross_heads;
    r.input.target = state.target;
    r.input.target_ids = state.target_is_ids;
    r.input.target_name = state.target_is_ids ? "target (token ids)" : "target";
    r.input.generate = state.target.empty() ? state.generate : 0;
    r.input.target_refused_by_other_models = false;
    r.forbidden = state.forbidden;
    if (needs.stages_of_layer) r.stages_layer = state.layer;
    for (RunVariant variant : needs.runs) {
        if (!variant.input.empty()) {
            // Another input is read as the main one is: ids where those are, at its resolution.
            RunInput other = r.input;
            other.text = variant.input.text;
            other.image_path = variant.input.image_path;
            variant.input = std::move(other);
        }
        r.variants.push_back(std::move(variant));
    }
    return r;
}

std::vector<std::string> label_lines(const std::string& labels) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start <= labels.size()) {
        const std::size_t end = std::min(labels.find('\n', start), labels.size());
        const std::size_t first = labels.find_first_not_of(" \t\r", start);
        const std::size_t last = labels.find_last_not_of(" \t\r", end == 0 ? 0 : end - 1);
        if (first < end && last != std::string::npos && last >= first)
            lines.push_back(labels.substr(first, last - first + 1));
        start = end + 1;
    }
    return lines;
}

bool causal_on(const AppState& state, const ModelInfo& info) { return state.causal.value_or(info.causal); }

bool is_builtin_model(const std::string& name) { return name.rfind("builtin:", 0) == 0; }

std::string model_display_name(const std::string& name) {
    if (is_builtin_model(name)) return name;
    std::string trimmed = name;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    const auto slash = trimmed.find_last_of('/');
    return slash == std::string::npos || slash + 1 == trimmed.size() ? trimmed : trimmed.substr(slash + 1);
}

void suit_demo_picture(AppState& state) {
    if (!state.image_is_demo) return;
    const std::string demo_picture = (assets_dir() / "shapes.png").string();
    const std::string demo_scene = (assets_dir() / "scenes" / "star.png").string();
    const bool wants_scene = state.model.name == "builtin:tiny-shapes";
    if (wants_scene && state.image_path == demo_picture) state.image_path = demo_scene;
    if (!wants_scene && state.image_path == demo_scene) state.image_path = demo_picture;
}

void choose_picture(AppState& state, const std::string& path) {
    state.image_path = path;
    state.image_is_demo = false;
}

void choose_model(AppState& state, const std::string& name) {
    if (state.model.name == name) return;
    state.model.name = name;
    state.model.tower.clear();   // another folder opens whole
    suit_demo_picture(state);
    state.query = -1;
    state.causal.reset();
    leave_model_choices(state);   // asked of the next model's first run, not after it
}

void return_to_model(AppState& state, const std::optional<ModelChoice>& in_use) {
    const ModelChoice back = in_use.value_or(ModelChoice{});
    if (state.model == back) return;
    state.model = back;
    state.query = -1;
    state.causal.reset();
}

namespace {

// The metric the Heads view plots and the Model grid colours by, where the kind shown has
// none of it: cross-attention's rows and columns are two sequences (no position metric),
// and only cross-attention has a monotonicity.
void suit_metric_to_kind(AppState& state) {
    const bool positional = state.metric == Metric::mean_distance || state.metric == Metric::diag ||
                            state.metric == Metric::prev_token || state.metric == Metric::induction;
    if (state.kind == AttentionKind::cross && positional) state.metric = Metric::monotonicity;
    if (state.kind != AttentionKind::cross && state.metric == Metric::monotonicity) state.metric = Metric::prev_token;
}

}   // namespace

void fit_to_model(AppState& state, const ModelInfo& info) {
    const Eigen::Index encoder_layers = info.encoder_decoder ? info.encoder_layers : 0;
    state.disabled_heads.resize(info.n_layers, info.n_heads);
    state.disabled_encoder_heads.resize(encoder_layers, info.n_heads);
    state.disabled_cross_heads.resize(info.encoder_decoder ? info.n_layers : 0, info.n_heads);
    // Hiding a head is the views' alone: one set of flags over every kind's layers.
    state.hidden_heads.resize(std::max(info.n_layers, encoder_layers), info.n_heads);
    if (!has_kind(info, state.kind)) state.kind = AttentionKind::decoder;
    // The layer is the kind's: an encoder may have more layers than its decoder, or fewer.
    state.layer = std::clamp(state.layer, 0, static_cast<int>(kind_layers(info, state.kind)) - 1);
    state.head = std::clamp(state.head, 0, static_cast<int>(info.n_heads) - 1);
    suit_metric_to_kind(state);
}

HeadMask& kind_disabled_heads(AppState& state) {
    switch (state.kind) {
    case AttentionKind::encoder: return state.disabled_encoder_heads;
    case AttentionKind::cross: return state.disabled_cross_heads;
    case AttentionKind::decoder: break;
    }
    return state.disabled_heads;
}

const HeadMask& kind_disabled_heads(const AppState& state) { return kind_disabled_heads(const_cast<AppState&>(state)); }

void choose_kind(AppState& state, AttentionKind kind, const ModelInfo& info) {
    if (!has_kind(info, kind) || kind == state.kind) return;
    if ((kind == AttentionKind::encoder) != (state.kind == AttentionKind::encoder)) state.query = -1;
    state.kind = kind;
    state.layer = std::clamp(state.layer, 0, static_cast<int>(kind_layers(info, kind)) - 1);
    suit_metric_to_kind(state);
}

int decoder_query(const AppState& state) { return state.kind == AttentionKind::encoder ? -1 : state.query; }

void fit_to_model(AppState& state, Eigen::Index n_layers, Eigen::Index n_heads) {
    state.disabled_heads.resize(n_layers, n_heads);
    state.hidden_heads.resize(n_layers, n_heads);
    const int last_layer = static_cast<int>(n_layers) - 1;
    const int last_head = static_cast<int>(n_heads) - 1;
    state.layer = std::clamp(state.layer, 0, last_layer);
    state.head = std::clamp(state.head, 0, last_head);
}

std::optional<HeadIndex> showcase_head(const std::vector<HeadMetrics>& metrics, Eigen::Index n_heads, bool images) {
    // Induction is the mechanism people come to see; a previous-token head is what it
    // is built on; the resting-place roles (first token, [CLS]) are the least telling.
    const auto rank = [](const std::string& role) {
        if (role == "induction") return 3;
        if (role == "previous token") return 2;
        if (role == "current token") return 1;
        return 0;
    };
    std::optional<HeadIndex> best;
    std::pair<int, double> best_key{-1, 0.0};
    for (std::size_t index = 0; index < metrics.size() && n_heads > 0; ++index) {
        const std::optional<MeasuredRole> role = measured_role(metrics[index], images);
        if (!role) continue;
        const std::pair<int, double> key{rank(role->name), role->score};
        if (key > best_key) {
            best_key = key;
            best = HeadIndex{static_cast<int>(index / static_cast<std::size_t>(n_heads)),
                             static_cast<int>(index % static_cast<std::size_t>(n_heads))};
        }
    }
    return best;
}

void leave_model_choices(AppState& state) {
    state.disabled_heads.enable_all();
    state.disabled_encoder_heads.enable_all();
    state.disabled_cross_heads.enable_all();
    state.forbidden.clear();
}

namespace {

// "--disable 5.9: <model> has layers 0..1 and heads 0..3; not disabled" for the pairs of
// `flag` outside [layers][heads]; nothing when all fit.
void note_heads_outside(std::vector<std::string>& notes, const std::string& flag,
                        const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs, const ModelInfo& info,
                        Eigen::Index layers, const std::string& layers_named) {
    std::string outside;
    for (const auto& [l, h] : pairs) {
        if (l < layers && h < info.n_heads) continue;
        if (!outside.empty()) outside += ',';
        outside += std::to_string(l) + "." + std::to_string(h);
    }
    if (outside.empty()) return;
    notes.push_back(flag + " " + outside + ": " + info.name + " has " + layers_named + "layers 0.." +
                    std::to_string(layers - 1) + " and heads 0.." + std::to_string(info.n_heads - 1) +
                    "; not disabled");
}

}   // namespace

std::vector<std::string> start_choice_notes(const StartChoices& choices, const ModelInfo& info, AttentionKind kind,
                                            Eigen::Index T) {
    std::vector<std::string> notes;
    const Eigen::Index layers = kind_layers(info, kind);   // the kind shown's
    const std::string last_head = std::to_string(info.n_heads - 1);
    if (choices.layer && (*choices.layer < 0 || *choices.layer >= layers)) {
        notes.push_back("--layer " + std::to_string(*choices.layer) + ": " + info.name + " has " +
                        (info.encoder_decoder ? std::string(attention_kind_name(kind)) + " " : std::string()) +
                        "layers 0.." + std::to_string(layers - 1) + "; showing layer " +
                        std::to_string(std::clamp<Eigen::Index>(*choices.layer, 0, layers - 1)));
    }
    if (choices.head && (*choices.head < 0 || *choices.head >= info.n_heads)) {
        notes.push_back("--head " + std::to_string(*choices.head) + ": " + info.name + " has heads 0.." + last_head +
                        "; showing head " +
                        std::to_string(std::clamp<Eigen::Index>(*choices.head, 0, info.n_heads - 1)));
    }
    if (choices.query && (*choices.query < 0 || *choices.query >= T)) {
        notes.push_back("--query " + std::to_string(*choices.query) + ": the input has positions 0.." +
                        std::to_string(T - 1) + "; no query pinned");
    }
    note_heads_outside(notes, "--disable", choices.disabled, info, info.n_layers, "");
    if (info.encoder_decoder) {
        note_heads_outside(notes, "--disable-encoder-heads", choices.disabled_encoder, info, info.encoder_layers,
                           "encoder ");
        note_heads_outside(notes, "--disable-cross-heads", choices.disabled_cross, info, info.n_layers, "decoder ");
    } else if (choices.target_given || choices.kind_given || !choices.disabled_encoder.empty() ||
               !choices.disabled_cross.empty()) {
        notes.push_back("--target, --generate, --kind and --disable-*-heads: " + info.name +
                        " is not an encoder-decoder model (T5 and BART take them); not used");
    }
    if (choices.image_given && !info.takes_image) {
        notes.push_back("--image: " + info.name + " reads text, not pictures; the picture is not used");
    }
    if (choices.text_given && !info.takes_text) {
        notes.push_back("--text: " + info.name + " reads pictures, not text; the text is not used");
    }
    return notes;
}

void fit_to_length(AppState& state, int n_tokens) {
    if (state.query >= n_tokens) state.query = -1;
}

void step_layer(AppState& state, int delta, Eigen::Index n_layers) {
    state.layer = std::clamp(state.layer + delta, 0, static_cast<int>(n_layers) - 1);
}

void step_head(AppState& state, int delta, Eigen::Index n_heads) {
    state.head = std::clamp(state.head + delta, 0, static_cast<int>(n_heads) - 1);
}

void toggle_disabled(AppState& state, int layer, int head) {
    HeadMask& disabled = kind_disabled_heads(state);
    if (layer < 0 || layer >= disabled.layers() || head < 0 || head >= disabled.heads()) return;
    disabled.toggle(layer, head);
}

void set_forbidden(AppState& state, int query, int key, bool forbidden) {
    const std::pair<int, int> pair{query, key};
    auto it = std::lower_bound(state.forbidden.begin(), state.forbidden.end(), pair);
    const bool present = it != state.forbidden.end() && *it == pair;
    if (forbidden && !present) state.forbidden.insert(it, pair);
    if (!forbidden && present) state.forbidden.erase(it);
}

bool is_forbidden(const AppState& state, int query, int key) {
    return std::binary_search(state.forbidden.begin(), state.forbidden.end(), std::pair<int, int>{query, key});
}

void clear_mask(AppState& state) { state.forbidden.clear(); }

void invert_mask(AppState& state, int n_tokens) {
    std::vector<std::pair<int, int>> inverted;
    for (int i = 0; i < n_tokens; ++i) {
        for (int j = 0; j < n_tokens; ++j) {
            if (!is_forbidden(state, i, j)) inverted.emplace_back(i, j);
        }
    }
    state.forbidden = std::move(inverted);
}

bool open_dropped_file(AppState& state, const std::string& path) {
    std::string extension;
    const auto dot = path.find_last_of('.');
    if (dot != std::string::npos) extension = path.substr(dot + 1);
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    static constexpr std::array<std::string_view, 7> image_extensions = {"png", "jpg", "jpeg", "bmp",
                                                                         "gif", "tga", "tpic"};
    if (std::find(image_extensions.begin(), image_extensions.end(), extension) == image_extensions.end()) return false;
    choose_picture(state, path);
    // The built-in text models cannot take it: switch to the demo image model that shows
    // patterns on any picture (builtin:tiny-shapes knows only its own 64 px scenes).
    if (state.model.name == "builtin:toy-text" || state.model.name == "builtin:tiny-story") {
        choose_model(state, "builtin:toy-vit");
    }
    state.query = -1;
    return true;
}

}   // namespace headscope::session
