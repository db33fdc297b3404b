#include "ui/views/compare_settings.h"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace headscope::ui {

namespace {

const std::initializer_list<std::pair<std::string_view, CompareMode>> mode_names = {
    {"two_heads", CompareMode::two_heads},     {"two_layers", CompareMode::two_layers},
    {"mask_on_off", CompareMode::mask_on_off}, {"ablation_on_off", CompareMode::ablation_on_off},
    {"two_inputs", CompareMode::two_inputs},   {"text_tower", CompareMode::text_tower},
};

std::string_view mode_name(CompareMode mode) {
    for (const auto& [name, value] : mode_names) {
        if (value == mode) return name;
    }
    return "two_heads";
}

}   // namespace

void follow_head_a(CompareSettings& settings, int layer, int head, int n_layers, int n_heads) {
    if (settings.b_chosen || n_layers < 1 || n_heads < 1) return;
    if (settings.mode == CompareMode::two_layers) {
        settings.b_layer = (layer + 1) % n_layers;
    } else if (settings.mode == CompareMode::text_tower) {
        settings.b_layer = std::min(layer, n_layers - 1);
        settings.b_head = std::min(head, n_heads - 1);
    } else {
        settings.b_layer = layer;
        settings.b_head = (head + 1) % n_heads;
    }
}

void fit_compare_b(CompareSettings& settings, int n_layers, int n_heads) {
    settings.b_layer = std::clamp(settings.b_layer, 0, std::max(0, n_layers - 1));
    settings.b_head = std::clamp(settings.b_head, 0, std::max(0, n_heads - 1));
}

void write_compare(session::SettingsWriter& out, const CompareSettings& settings) {
    out.set("mode", std::string(mode_name(settings.mode)))
        .set("b_layer", settings.b_layer)
        .set("b_head", settings.b_head)
        .set("b_chosen", settings.b_chosen)
        .set("text_b", settings.text_b)
        .set("image_b", settings.image_b)
        .set("b_label", settings.b_label);
}

void read_compare(session::SettingsReader& in, CompareSettings& settings) {
    in.read("mode", settings.mode, mode_names);
    // The model's own range applies once it is in (fit_compare_b).
    in.read("b_layer", settings.b_layer, 0, INT_MAX);
    in.read("b_head", settings.b_head, 0, INT_MAX);
    in.read("b_chosen", settings.b_chosen);
    in.read("text_b", settings.text_b);
    in.read("image_b", settings.image_b);
    in.read("b_label", settings.b_label, 0, INT_MAX);
}

}   // namespace headscope::ui
