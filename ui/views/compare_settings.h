#pragma once
// The Compare view's own settings: what is compared with what, head or layer B, input B.
// No ImGui here: B following A and the settings' JSON are unit-tested alone.

#include "session/view_settings.h"

#include <string>

namespace headscope::ui {

enum class CompareMode {
    two_heads,         // head A vs head B of one run
    two_layers,        // layer A vs layer B: their heads averaged, and every head pair's divergence
    mask_on_off,       // one head, causal mask on vs off
    ablation_on_off,   // one head, with the disabled heads vs every head on
    two_inputs,        // one head on input A vs input B (another sentence or picture)
    text_tower,        // a zero-shot model's (CLIP, SigLIP): the image tower's head vs a label's text-tower head
};

struct CompareSettings {
    CompareMode mode = CompareMode::two_heads;
    int b_layer = 0;   // head B (two heads) or layer B (two layers)
    int b_head = 1;
    // Until the user moves a B slider, B is the head after A in A's layer (two heads) or
    // the layer after A's (two layers): the view never opens on A compared with itself.
    bool b_chosen = false;
    std::string text_b;    // input B, text models
    std::string image_b;   // input B, image models
    int b_label = 0;       // text tower: the label whose run B shows
};

// While B is not chosen, it follows head A (layer, head): the head after A in A's layer
// (two heads), the layer after A's (two layers), wrapping at the end; the same layer and
// head of the text tower (text tower).
void follow_head_a(CompareSettings& settings, int layer, int head, int n_layers, int n_heads);

// Layer and head B inside a model of n_layers x n_heads.
void fit_compare_b(CompareSettings& settings, int n_layers, int n_heads);

// As a JSON object's fields: "mode" (two_heads, two_layers, mask_on_off, ablation_on_off,
// two_inputs, text_tower), "b_layer", "b_head", "b_chosen", "text_b", "image_b", "b_label".
void write_compare(session::SettingsWriter& out, const CompareSettings& settings);
void read_compare(session::SettingsReader& in, CompareSettings& settings);

}   // namespace headscope::ui
