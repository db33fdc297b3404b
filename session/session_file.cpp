#include "session/session_file.h"

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/base/json_file.h"
#include "core/base/output_file.h"
#include "core/models/generate.h"
#include "core/models/model_registry.h"
#include "session/view_settings.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <span>
#include <type_traits>

namespace headscope::session {

namespace {

using nlohmann::json;

json heads_json(const HeadMask& flags) {
    json off = json::array();
    for (Eigen::Index l = 0; l < flags.layers(); ++l) {
        for (Eigen::Index h = 0; h < flags.heads(); ++h) {
            if (flags.off(l, h)) off.push_back({l, h});
        }
    }
    return {{"layers", flags.layers()}, {"heads", flags.heads()}, {"off", off}};
}

// The views' own settings: each one's JSON object under its name.
json views_json(const std::map<std::string, std::string>& settings) {
    json views = json::object();
    for (const auto& [name, text] : settings) views[name] = json::parse(text, nullptr, false);
    return views;
}

const char* scale_name(HeatScale scale) {
    switch (scale) {
    case HeatScale::shared: return "shared";
    case HeatScale::per_head: return "head_max";
    case HeatScale::log: return "log";
    }
    return "shared";
}

// Reads the fields of one JSON object, each of an expected type, naming the file and the
// field when one is not.
class Fields {
public:
    Fields(const json& object, std::string label, std::string path)
        : object_(object), label_(std::move(label)), path_(std::move(path)) {
        if (object_.is_object()) return;
        if (path_.empty()) throw Error(label_ + ": expected an object of a session's fields, {...}");
        throw Error(label_ + ": field '" + path_ + "': expected an object");
    }
    const json* find(const char* key) const {
        const auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    template <typename T>
    void read(const char* key, T& into) const {
        const json* value = find(key);
        if (value == nullptr) return;
        if constexpr (std::is_same_v<T, bool>) {
            if (!value->is_boolean()) fail(key, "expected true or false");
        } else if constexpr (std::is_integral_v<T>) {
            if (!value->is_number_integer()) fail(key, "expected a whole number");
        } else {
            if (!value->is_string()) fail(key, "expected a string");
        }
        into = value->get<T>();
    }
    Fields child(const char* key) const { return Fields(*find(key), label_, where(key)); }
    const json& object() const { return object_; }
    [[noreturn]] void fail(const std::string& key, const std::string& why) const {
        throw Error(label_ + ": field '" + where(key) + "': " + why);
    }
    std::string where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

private:
    const json& object_;
    std::string label_;
    std::string path_;
};

// "views": {"matrix": {...}, ...}: each view's settings, an object the view reads itself.
std::map<std::string, std::string> views_from(const Fields& fields) {
    const Fields views = fields.child("views");
    std::map<std::string, std::string> settings;
    for (const auto& [name, value] : views.object().items()) {
        if (!value.is_object()) views.fail(name, "expected an object of the view's settings");
        settings[name] = value.dump();
    }
    return settings;
}

HeadMask heads_from(const Fields& fields, const char* key) {
    const Fields heads = fields.child(key);
    Eigen::Index layers = 0;
    Eigen::Index per_layer = 0;
    heads.read("layers", layers);
    heads.read("heads", per_layer);
    if (layers < 0 || per_layer < 0 || layers > 4096 || per_layer > 4096) {
        heads.fail("layers", "expected 0..4096 layers and heads");
    }
    HeadMask flags(layers, per_layer);
    const json* off = heads.find("off");
    if (off == nullptr) return flags;
    if (!off->is_array()) heads.fail("off", "expected a list of [layer, head] pairs");
    for (const json& pair : *off) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() || !pair[1].is_number_integer() ||
            pair[0].get<Eigen::Index>() < 0 || pair[1].get<Eigen::Index>() < 0 ||
            pair[0].get<Eigen::Index>() >= layers || pair[1].get<Eigen::Index>() >= per_layer) {
            heads.fail("off", "expected [layer, head] pairs inside " + std::to_string(layers) + " x " +
                                  std::to_string(per_layer) + ", got " + pair.dump());
        }
        flags.set(pair[0].get<Eigen::Index>(), pair[1].get<Eigen::Index>());
    }
    return flags;
}

void read_model(const Fields& fields, ModelChoice& model) {
    const Fields m = fields.child("model");
    m.read("name", model.name);
    m.read("tower", model.tower);
    ToyConfig& c = model.config;
    m.read("width", c.width);
    m.read("heads", c.n_heads);
    m.read("layers", c.n_layers);
    m.read("mlp_ratio", c.mlp_ratio);
    m.read("max_tokens", c.max_tokens);
    m.read("image_size", c.image_size);
    m.read("patch", c.patch_size);
    m.read("bias", c.bias);
    m.read("seed", c.seed);
    std::string init = c.init == ToyInit::random ? "random" : "structured";
    std::string arch = c.arch == ToyArch::modern ? "modern" : "classic";
    m.read("init", init);
    m.read("arch", arch);
    if (init != "random" && init != "structured") m.fail("init", "expected \"structured\" or \"random\"");
    if (arch != "modern" && arch != "classic") m.fail("arch", "expected \"classic\" or \"modern\"");
    c.init = init == "random" ? ToyInit::random : ToyInit::structured;
    c.arch = arch == "modern" ? ToyArch::modern : ToyArch::classic;
}

void read_display(const Fields& fields, AppState& state) {
    std::string colormap(colormap_name(state.colormap));
    fields.read("colormap", colormap);
    const std::optional<Colormap> map = colormap_from_name(colormap);
    if (!map) fields.fail("colormap", "'" + colormap + "' is not a colour map (viridis, magma, cividis, greys)");
    state.colormap = *map;
    std::string scale = scale_name(state.scale);
    fields.read("scale", scale);
    if (scale != "shared" && scale != "head_max" && scale != "log") {
        fields.fail("scale", "expected \"shared\", \"head_max\" or \"log\"");
    }
    state.scale = scale == "log" ? HeatScale::log : scale == "head_max" ? HeatScale::per_head : HeatScale::shared;
}

// Sessions saved before the views kept their own settings held the Compare view's input
// B as top-level fields: read into that view's settings, where it did not save its own.
void read_old_compare_fields(const Fields& fields, AppState& state) {
    std::string text_b;
    std::string image_b;
    fields.read("compare_text", text_b);
    fields.read("compare_image", image_b);
    if ((text_b.empty() && image_b.empty()) || state.view_settings.contains("compare")) return;
    SettingsWriter old;
    old.set("text_b", text_b).set("image_b", image_b);
    state.view_settings["compare"] = old.text();
}

// An encoder-decoder's target and kind, and its encoder's and cross-attention's heads.
void read_encoder_decoder(const Fields& fields, AppState& state) {
    fields.read("target", state.target);
    fields.read("target_is_ids", state.target_is_ids);
    fields.read("generate", state.generate);
    if (state.generate < 0 || state.generate > max_generated_tokens) {
        fields.fail("generate", "expected 0.." + std::to_string(max_generated_tokens) + " tokens");
    }
    std::string kind = attention_kind_name(state.kind);
    fields.read("kind", kind);
    const std::optional<AttentionKind> named = attention_kind_named(kind);
    if (!named) fields.fail("kind", "'" + kind + "' is not a kind of attention (decoder, encoder, cross)");
    state.kind = *named;
    if (fields.find("disabled_encoder_heads") != nullptr)
        state.disabled_encoder_heads = heads_from(fields, "disabled_encoder_heads");
    if (fields.find("disabled_cross_heads") != nullptr)
        state.disabled_cross_heads = heads_from(fields, "disabled_cross_heads");
}

}   // namespace

std::string session_json(const AppState& state) {
    const ToyConfig& c = state.model.config;
    json forbidden = json::array();
    for (const auto& [i, j] : state.forbidden) forbidden.push_back({i, j});
    // The demo settings only for a demo model built from them: a checkpoint's sizes are its
    // own, and the demo's defaults beside its name would read as if they were.
    json model = {{"name", state.model.name}};
    if (!state.model.tower.empty()) model["tower"] = state.model.tower;
    if (is_toy_model(state.model.name)) {
        model.update({{"width", c.width},
                      {"heads", c.n_heads},
                      {"layers", c.n_layers},
                      {"mlp_ratio", c.mlp_ratio},
                      {"max_tokens", c.max_tokens},
                      {"image_size", c.image_size},
                      {"patch", c.patch_size},
                      {"bias", c.bias},
                      {"seed", c.seed},
                      {"init", c.init == ToyInit::random ? "random" : "structured"},
                      {"arch", c.arch == ToyArch::modern ? "modern" : "classic"}});
    }
    const json session = {
        {"headscope_session", 1},
        {"model", model},
        {"text", state.text},
        {"text_is_ids", state.text_is_ids},
        {"image", state.image_path},
        {"labels", state.labels},
        {"labels_are_ids", state.labels_are_ids},
        {"own_resolution", state.own_resolution},
        {"target", state.target},
        {"target_is_ids", state.target_is_ids},
        {"generate", state.generate},
        {"kind", attention_kind_name(state.kind)},
        {"causal", state.causal ? json(*state.causal) : json(nullptr)},
        {"disabled_heads", heads_json(state.disabled_heads)},
        {"hidden_heads", heads_json(state.hidden_heads)},
        {"disabled_encoder_heads", heads_json(state.disabled_encoder_heads)},
        {"disabled_cross_heads", heads_json(state.disabled_cross_heads)},
        {"forbidden", forbidden},
        {"layer", state.layer},
        {"head", state.head},
        {"query", state.query},
        {"view", state.view},
        {"colormap", std::string(colormap_name(state.colormap))},
        {"scale", scale_name(state.scale)},
        {"views", views_json(state.view_settings)},
    };
    return session.dump(2) + "\n";
}

AppState apply_session(const std::string& text, const std::string& label, AppState state) {
    const json parsed = parse_json_text(text, label);
    const Fields fields(parsed, label, "");
    int version = 0;
    fields.read("headscope_session", version);
    if (version != 1) fields.fail("headscope_session", "expected 1 (a session file of this version)");
    if (fields.find("model") != nullptr) read_model(fields, state.model);
    fields.read("text", state.text);
    fields.read("text_is_ids", state.text_is_ids);
    if (const json* image = fields.find("image"); image != nullptr) {
        fields.read("image", state.image_path);
        state.image_is_demo = false;
    }
    fields.read("own_resolution", state.own_resolution);
    fields.read("labels", state.labels);
    fields.read("labels_are_ids", state.labels_are_ids);
    if (const json* causal = fields.find("causal"); causal != nullptr) {
        if (!causal->is_null() && !causal->is_boolean()) fields.fail("causal", "expected true, false or null");
        state.causal = causal->is_null() ? std::nullopt : std::optional<bool>(causal->get<bool>());
    }
    if (fields.find("disabled_heads") != nullptr) state.disabled_heads = heads_from(fields, "disabled_heads");
    if (fields.find("hidden_heads") != nullptr) state.hidden_heads = heads_from(fields, "hidden_heads");
    read_encoder_decoder(fields, state);
    if (const json* pairs = fields.find("forbidden"); pairs != nullptr) {
        state.forbidden.clear();
        if (!pairs->is_array()) fields.fail("forbidden", "expected a list of [query, key] pairs");
        for (const json& pair : *pairs) {
            if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() ||
                !pair[1].is_number_unsigned()) {
                fields.fail("forbidden", "expected [query, key] pairs of positions, got " + pair.dump());
            }
            state.forbidden.emplace_back(pair[0].get<int>(), pair[1].get<int>());
        }
        std::sort(state.forbidden.begin(), state.forbidden.end());
    }
    fields.read("layer", state.layer);
    fields.read("head", state.head);
    fields.read("query", state.query);
    fields.read("view", state.view);
    read_display(fields, state);
    if (fields.find("views") != nullptr) state.view_settings = views_from(fields);
    read_old_compare_fields(fields, state);
    return state;
}

void save_session(const std::string& path, const AppState& state) {
    const std::string text = session_json(state);
    write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

AppState open_session(const std::string& path, AppState state) {
    // A session is a few kilobytes; a megabyte is not one.
    return apply_session(read_file_bytes(path, 1u << 20, "session file"), path, std::move(state));
}

}   // namespace headscope::session
