#include "ui/panels/controls_panel.h"

#include "core/models/generate.h"
#include "core/models/model_registry.h"
#include "core/render/visible_token.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

namespace headscope::ui {

using namespace session;

ControlsOutcome ControlsPanel::draw(AppState& state, const Snapshot* shown, const ModelInfo* chosen,
                                    const RecentLists& recent) {
    ControlsOutcome outcome;
    outcome.model_to_open = model_picker_.draw(state, recent.models);
    if (is_toy_model(state.model.name)) draw_toy_settings(state);
    if (chosen != nullptr && (chosen->zero_shot || !state.model.tower.empty())) draw_tower(state);
    ImGui::Separator();
    draw_input(state, chosen, recent, outcome);
    const bool shown_chosen = shown != nullptr && shown->model.name == state.model.name;
    if (chosen != nullptr && chosen->encoder_decoder) draw_target(state, shown_chosen ? shown : nullptr, *chosen);
    draw_display_settings(state, chosen);
    return outcome;
}

void ControlsPanel::draw_toy_settings(AppState& state) {

    // The built demo models' settings; a checkpoint's (a trained one's too) come from its config.json.
    bool structured = state.model.config.init == ToyInit::structured;
    if (ImGui::Checkbox("Structured heads", &structured)) {
        state.model.config.init = structured ? ToyInit::structured : ToyInit::random;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Off: random weights, as the tutorials initialise them");
    int seed = static_cast<int>(state.model.config.seed);
    if (ImGui::InputInt("Seed", &seed)) state.model.config.seed = static_cast<std::uint64_t>(std::max(seed, 0));
    int size[3] = {static_cast<int>(state.model.config.width), static_cast<int>(state.model.config.n_heads),
                   static_cast<int>(state.model.config.n_layers)};
    if (ImGui::InputInt3("E, H, L", size, ImGuiInputTextFlags_EnterReturnsTrue)) {
        state.model.config.width = size[0];
        state.model.config.n_heads = size[1];
        state.model.config.n_layers = size[2];
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Model width, heads per layer and layers; Enter applies");
}

void ControlsPanel::draw_input(AppState& state, const ModelInfo* chosen, const RecentLists& recent,
                               ControlsOutcome& outcome) {
    const bool image_model = chosen != nullptr && chosen->takes_image;
    if (image_model) {
        ImGui::TextUnformatted("Image file (or drop one on the window)");
        ImGui::SetNextItemWidth(px(-90.0f));
        // The field edits its own copy; Enter applies it (a half-typed path is not loaded).
        if (image_edit_source_ != state.image_path) {
            image_edit_ = state.image_path;
            image_edit_source_ = state.image_path;
        }
        if (ImGui::InputText("##image", &image_edit_, ImGuiInputTextFlags_EnterReturnsTrue)) {
            choose_picture(state, image_edit_);
            outcome.file_opened = image_edit_;
        }
        ImGui::SameLine();
        if (const auto picked = file_picker_.draw("images", state.image_path, recent.files)) {
            choose_picture(state, *picked);
            outcome.file_opened = *picked;
        }
        if (chosen->zero_shot) draw_labels(state);
    } else {
        // A checkpoint without tokenizer files reads token ids (the worker parses them);
        // any other text model reads them when the box is ticked (or --tokens started it).
        const bool ids_only = chosen != nullptr && chosen->reads_ids_only;
        if (ids_only) {
            ImGui::TextWrapped(chosen->encoder_decoder
                                   ? "Source as token ids, comma-separated (the folder has no tokenizer files)"
                                   : "Token ids, comma-separated (the folder has no tokenizer files)");
        } else {
            const bool source = chosen != nullptr && chosen->encoder_decoder;
            ImGui::TextUnformatted(
                state.text_is_ids ? (source ? "Source as token ids, comma-separated" : "Token ids, comma-separated")
                                  : (source ? "Source (the encoder's input)" : "Sentence"));
            ImGui::SameLine();
            ImGui::Checkbox("ids", &state.text_is_ids);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("Read the box as token ids (e.g. 464,3797,3332), not text");
        }
        ImGui::InputTextMultiline("##sentence", &state.text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 5));
    }
}

// A model of two towers (CLIP): the whole, its maps the image tower's with the labels scored,
// or the text tower alone, a text model of its own (the folder opens again as that).
void ControlsPanel::draw_tower(AppState& state) {
    int tower = state.model.tower == "text" ? 1 : 0;
    ImGui::RadioButton("image, labels scored", &tower, 0);
    ImGui::SameLine();
    ImGui::RadioButton("text tower", &tower, 1);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The labels' encoder alone: its maps for the sentence you type");
    if (tower == 1 && state.model.tower.empty() && !state.labels.empty()) {
        // The tower opens on the first label, as typed (ids where the labels are ids: a
        // folder without a tokenizer reads nothing else).
        state.text = state.labels.substr(0, state.labels.find('\n'));
        state.text_is_ids = state.labels_are_ids;
    }
    const std::string chosen = tower == 1 ? "text" : "";
    // The other tower is another network: heads switched off here are not its heads.
    if (chosen != state.model.tower) session::leave_model_choices(state);
    state.model.tower = chosen;
}

// A zero-shot model's labels (CLIP): one per line, each scored against the picture in the
// predictions panel as it is typed.
void ControlsPanel::draw_labels(AppState& state) {
    ImGui::TextUnformatted(state.labels_are_ids ? "Labels as token ids, one per line (Ctrl+L)"
                                                : "Labels, one per line (Ctrl+L)");
    ImGui::SameLine();
    ImGui::Checkbox("ids##labels", &state.labels_are_ids);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Read each line as token ids (e.g. 49406,320,2368,49407)");
    if (focus_labels_) {
        ImGui::SetKeyboardFocusHere();
        focus_labels_ = false;
    }
    ImGui::InputTextMultiline("##labels", &state.labels, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 5));
    if (ImGui::IsItemHovered() && state.labels.empty()) {
        ImGui::SetTooltip("Type a label per line (\"a photo of a cat\"): the predictions panel shows how likely "
                          "each is for the picture");
    }
}

void ControlsPanel::draw_target(AppState& state, const Snapshot* shown, const ModelInfo& chosen) {
    // A folder without a tokenizer reads the target as ids, as it reads the source.
    ImGui::TextUnformatted(state.target_is_ids || chosen.reads_ids_only ? "Target as token ids (start token first)"
                                                                        : "Target (the decoder's)");
    if (!chosen.reads_ids_only) {
        ImGui::SameLine();
        ImGui::Checkbox("ids##target", &state.target_is_ids);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Read the target as the decoder's input ids, start token first");
    }
    if (ImGui::InputTextMultiline("##target", &state.target, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 3))) {
        state.generate = 0;   // a typed target is read as typed (teacher forcing)
    }
    if (ImGui::IsItemHovered() && state.target.empty()) {
        ImGui::SetTooltip("Type what the decoder reads (shifted right after its start token, as in training), or "
                          "let it generate");
    }
    if (ImGui::Button("Generate")) {
        state.target.clear();
        state.generate = generate_count_;
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Greedy decoding from the source, up to the tokens beside, every head on; the maps are "
                          "then of the generated target");
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(px(90.0f));
    ImGui::InputInt("tokens at most", &generate_count_);
    generate_count_ = std::clamp(generate_count_, 1, max_generated_tokens);
    if (shown != nullptr && shown->input.source) {
        if (state.target.empty() && state.generate > 0) {
            std::string generated;
            for (std::size_t i = 1; i < shown->input.labels.size(); ++i)
                generated += visible_token(shown->input.labels[i]) + " ";
            ImGui::TextWrapped("Generated (%zu): %s", shown->input.labels.size() - 1, generated.c_str());
        }
        draw_step_slider(state, *shown);
    }
    int kind = static_cast<int>(state.kind);
    ImGui::TextUnformatted("Attention:");
    ImGui::SameLine();
    ImGui::RadioButton("encoder", &kind, static_cast<int>(AttentionKind::encoder));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The encoder's self-attention over the source");
    ImGui::SameLine();
    ImGui::RadioButton("decoder", &kind, static_cast<int>(AttentionKind::decoder));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The decoder's causal self-attention over the target");
    ImGui::SameLine();
    ImGui::RadioButton("cross", &kind, static_cast<int>(AttentionKind::cross));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Each target token over the source: the decoder's queries, the encoder's keys");
    choose_kind(state, static_cast<AttentionKind>(kind), chosen);
    ImGui::Separator();
}

// Step s of the decoding: the target's row s (the pinned query of the decoder and cross
// kinds), what it attended to, and, in the predictions, the token it gave next.
void ControlsPanel::draw_step_slider(AppState& state, const Snapshot& shown) {
    const auto steps = static_cast<int>(shown.input.labels.size());
    if (steps < 2) return;
    if (state.kind == AttentionKind::encoder) {
        ImGui::TextDisabled("Step: the decoder and cross kinds' rows");
        return;
    }
    int step = std::clamp(state.query, -1, steps - 1);
    std::string text = "every row";
    if (step >= 0) {
        text = "step " + std::to_string(step) + ": ";
        // The slider's text is a format: a token's own '%' is written twice.
        for (const char c : visible_token(shown.input.labels[static_cast<std::size_t>(step)]))
            text += c == '%' ? "%%" : std::string(1, c);
    }
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - labelled_width(0.0f, "Step"));
    if (ImGui::SliderInt("Step", &step, -1, steps - 1, text.c_str(), ImGuiSliderFlags_AlwaysClamp)) state.query = step;
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("The decoder's row at each step: what it attended to, and the token it gave next "
                          "(left end: every row)");
    }
}

void ControlsPanel::draw_display_settings(AppState& state, const ModelInfo* chosen) {
    bool causal = chosen != nullptr ? causal_on(state, *chosen) : state.causal.value_or(false);
    if (ImGui::Checkbox("Causal mask (C)", &causal)) state.causal = causal;
    if (ImGui::IsItemHovered() && chosen != nullptr) {
        ImGui::SetTooltip("%s is %s by default", chosen->name.c_str(), chosen->causal ? "causal" : "not causal");
    }

    constexpr Colormap maps[] = {Colormap::viridis, Colormap::magma, Colormap::cividis, Colormap::greys};
    if (ImGui::BeginCombo("Colours", std::string(colormap_name(state.colormap)).c_str())) {
        for (Colormap map : maps) {
            if (ImGui::Selectable(std::string(colormap_name(map)).c_str(), map == state.colormap)) state.colormap = map;
        }
        ImGui::EndCombo();
    }
    int scale = static_cast<int>(state.scale);
    ImGui::RadioButton("0..1", &scale, 0);
    ImGui::SameLine();
    ImGui::RadioButton("head max", &scale, 1);
    ImGui::SameLine();
    ImGui::RadioButton("log", &scale, 2);
    state.scale = static_cast<HeatScale>(scale);
}

namespace {

// One key/value group's line: its heads share keys and values, so switching off the whole
// group is one click (ticked when every head of it is off).
void draw_group_toggle(HeadMask& disabled, int layer, int g, int group) {
    const int first = g * group;
    bool all_off = true;
    for (int h = first; h < first + group; ++h) all_off = all_off && disabled.off(layer, h);
    ImGui::PushID(-1 - g);
    ImGui::TextDisabled("key/value group %d", g);
    ImGui::SameLine(px(170.0f));
    if (ImGui::Checkbox("disable all", &all_off)) {
        for (int h = first; h < first + group; ++h) disabled.set(layer, h, all_off);
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Heads %d-%d read the same keys and values (grouped-query attention): switch them off "
                          "together",
                          g * group, g * group + group - 1);
    }
    ImGui::PopID();
}

}   // namespace

void ControlsPanel::draw_heads(AppState& state, const Snapshot& shown) {
    const ModelInfo& info = shown.info;
    const auto fits = [&info](const HeadMask& flags) {
        return flags.layers() == info.n_layers && flags.heads() == info.n_heads;
    };
    HeadMask& disabled = kind_disabled_heads(state);
    // Hidden flags span every kind's layers (fit_to_model); until they are sized, no toggles.
    if (!fits(disabled) || state.hidden_heads.layers() < info.n_layers || state.hidden_heads.heads() != info.n_heads)
        return;
    ImGui::Separator();
    // Clamped even when typed (Ctrl+click): the layer indexes the per-layer flags below.
    // As wide as the panel leaves beside its label.
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - labelled_width(0.0f, "Layer (up/down)"));
    ImGui::SliderInt("Layer (up/down)", &state.layer, 0, static_cast<int>(info.n_layers) - 1, "%d",
                     ImGuiSliderFlags_AlwaysClamp);
    if (const Eigen::Index window = info.window_of(state.layer); window > 0) {
        ImGui::TextDisabled("local layer: each query sees its %ld latest keys", static_cast<long>(window));
    } else if (info.has_local_layers()) {
        ImGui::TextDisabled("global layer: each query sees every earlier key");
    }
    ImGui::TextUnformatted("Heads (left/right): show, disable = ablate");
    const int group = static_cast<int>(info.group_size());
    const float indent = group > 1 ? px(12.0f) : 0.0f;
    for (int h = 0; h < static_cast<int>(info.n_heads); ++h) {
        if (group > 1 && h % group == 0) draw_group_toggle(disabled, state.layer, h / group, group);
        ImGui::PushID(h);
        if (indent > 0.0f) ImGui::Indent(indent);
        if (ImGui::RadioButton(numbered("head ", h).c_str(), state.head == h)) state.head = h;
        if (indent > 0.0f) ImGui::Unindent(indent);
        ImGui::SameLine(px(100.0f));
        bool show = !state.hidden_heads.off(state.layer, h);
        if (ImGui::Checkbox("show", &show)) state.hidden_heads.set(state.layer, h, !show);
        ImGui::SameLine(px(170.0f));
        bool off = disabled.off(state.layer, h);
        if (ImGui::Checkbox("disable", &off)) disabled.set(state.layer, h, off);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Ablate: zero this head's context; later layers recompute");
        ImGui::PopID();
    }
    draw_disabled_list(state);
    ImGui::Separator();
    ImGui::TextWrapped("%s", info.description.c_str());
}

void ControlsPanel::draw_disabled_list(AppState& state) {
    // Every layer's disabled heads of the kind shown, not only the shown layer's boxes above.
    HeadMask& disabled = kind_disabled_heads(state);
    const Eigen::Index off = disabled.count();
    if (off == 0) return;
    constexpr Eigen::Index named = 12;
    std::string list;
    Eigen::Index listed = 0;
    for (Eigen::Index l = 0; l < disabled.layers() && listed < named; ++l) {
        for (Eigen::Index h = 0; h < disabled.heads() && listed < named; ++h) {
            if (!disabled.off(l, h)) continue;
            list += (list.empty() ? "" : ", ") + std::to_string(l) + "." + std::to_string(h);
            ++listed;
        }
    }
    if (off > named) list += " and " + std::to_string(off - named) + " more";
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 140, 120, 255));
    ImGui::TextWrapped("Disabled (%ld): %s", static_cast<long>(off), list.c_str());
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("Enable all")) disabled.enable_all();
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip(state.kind == AttentionKind::decoder
                              ? "Switch every head of every layer back on (Ctrl+Z undoes it)"
                              : "Switch every head of this kind back on, in every layer (Edit > Enable every head: "
                                "all kinds; Ctrl+Z undoes it)");
    }
}

}   // namespace headscope::ui
