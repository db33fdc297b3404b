// The Compare view: two maps side by side: heads, layers, mask on/off, ablation, two inputs,
// and for a zero-shot model the image tower's head beside a label's text-tower head.

#include "core/analysis/head_compare.h"
#include "ui/views/compare_settings.h"
#include "ui/views/view.h"
#include "ui/views/view_context.h"
#include "ui/widgets/cell_under.h"
#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/job_progress.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

namespace headscope::ui {

using namespace session;

class CompareView final : public View {
public:
    std::string_view name() const override { return "compare"; }
    const char* title() const override { return "Compare"; }
    std::string_view summary() const override {
        return "two maps side by side: heads, layers, mask on/off, ablation, two inputs, a label's text tower";
    }
    // Mask on vs off: the same input with the causal mask flipped; two inputs: input B,
    // once typed.
    session::ViewNeeds needs(const session::AppState& /*state*/) const override {
        session::ViewNeeds needs;
        if (own_.mode == CompareMode::mask_on_off) {
            needs.runs.push_back({.name = flipped_run, .flip_causal = true});
        }
        if (own_.mode == CompareMode::two_inputs) {
            session::RunVariant b{.name = second_input_run};
            b.input.text = own_.text_b;
            b.input.image_path = own_.image_b;
            if (!b.input.empty()) needs.runs.push_back(std::move(b));
        }
        return needs;
    }
    static constexpr const char* flipped_run = "the flipped mask";
    static constexpr const char* second_input_run = "input B";
    void draw(ViewContext& context) override;
    std::string settings() const override {
        SettingsWriter out;
        write_zoom(out, zoom_);
        write_compare(out, own_);
        return out.text();
    }
    std::string restore(const std::string& settings) override {
        std::pair own{zoom_, own_};
        std::string why =
            read_settings(settings, own, [](SettingsReader& in, std::pair<MapZoom, CompareSettings>& into) {
                read_zoom(in, into.first);
                read_compare(in, into.second);
            });
        std::tie(zoom_, own_) = own;
        return why;
    }
    void fit_to_model(const ModelInfo& info) override { fit_b(info); }

    struct Sides;   // the two maps compared

private:
    void choose_two_heads(ViewContext& context, Sides& sides);
    void choose_two_layers(ViewContext& context, Sides& sides);
    void choose_mask_on_off(ViewContext& context, Sides& sides);
    void choose_ablation_on_off(ViewContext& context, Sides& sides);
    void choose_two_inputs(ViewContext& context, Sides& sides);
    void choose_text_tower(ViewContext& context, Sides& sides);
    // B's layer and head inside the model B is read from: the text tower's in text-tower mode.
    void fit_b(const ModelInfo& info) {
        const bool text = own_.mode == CompareMode::text_tower && info.zero_shot;
        fit_compare_b(own_, static_cast<int>(text ? info.label_layers : info.n_layers),
                      static_cast<int>(text ? info.label_heads : info.n_heads));
    }
    void draw_side_by_side(ViewContext& context, const Sides& sides);
    void draw_layer_pairs(ViewContext& context);

    // Two layers' heads averaged, and for which result / layers (their key).
    std::string layer_means_key_;
    Matrix layer_mean_a_;
    Matrix layer_mean_b_;
    std::string compare_image_edit_;     // input B's path while typing (applied on Enter)
    std::string compare_image_source_;   // the applied path compare_image_edit_ was last reset from
    MapZoom zoom_;                       // A, B and A - B zoom and pan together
    CompareSettings own_;
};

// The two maps compared, each with its mask and title; `waiting` says why B is missing.
struct CompareView::Sides {
    std::shared_ptr<const Matrix> a;
    std::shared_ptr<const Matrix> b;
    const Mask* mask_a = nullptr;
    const Mask* mask_b = nullptr;
    std::string a_title;
    std::string b_title;
    std::string waiting;
    const std::vector<std::string>* b_labels = nullptr;   // B's tokens where B is another input; else A's
};

namespace {

// The heads of one layer averaged: what the layer as a whole attends to.
Matrix layer_mean(const session::Snapshot& shown, int layer) {
    Matrix mean = *shown.head_map(layer, 0);
    for (int h = 1; h < static_cast<int>(shown.info.n_heads); ++h) mean += *shown.head_map(layer, h);
    return mean / static_cast<float>(shown.info.n_heads);
}

// The tooltip over cell (i, j) of A, B or A - B (same shape): its tokens (A's, and B's
// where B is another input: "A's / B's"), and the cell in each map, masked cells said so.
void describe_cell(const CompareView::Sides& sides, const HeatmapLabels* labels, int i, int j) {
    const auto one = [](const std::vector<std::string>& all, int at) {
        return at < static_cast<int>(all.size()) ? visible_token(all[static_cast<std::size_t>(at)]) : std::string();
    };
    const auto token = [&](const std::vector<std::string>& all, int at) {
        std::string text = one(all, at);
        if (sides.b_labels != nullptr) text.append(" / ").append(one(*sides.b_labels, at));
        return text;
    };
    if (labels != nullptr) {
        ImGui::Text("query %d  %s", i, token(labels->queries, i).c_str());
        ImGui::Text("key   %d  %s", j, token(labels->keys, j).c_str());
    }
    const auto value = [&](const char* name, const std::string& title, const Matrix& m, const Mask* mask) {
        if (mask != nullptr && !(*mask)(i, j)) {
            ImGui::Text("%s  masked          %s", name, title.c_str());
        } else {
            ImGui::Text("%s  %.4f  %s", name, static_cast<double>(m(i, j)), title.c_str());
        }
    };
    value("A    ", sides.a_title, *sides.a, sides.mask_a);
    value("B    ", sides.b_title, *sides.b, sides.mask_b);
    const float a = (*sides.a)(i, j);
    const float b = (*sides.b)(i, j);
    ImGui::Text("A - B  %+.4f", static_cast<double>(a - b));
    ImGui::TextDisabled("wheel: zoom all three; drag: pan; double-click or F: fit; Ctrl+C: copy");
    if (labels == nullptr || !copy_key_pressed()) return;
    // A header and one row, tab-separated (a masked cell's weight is 0, as the map draws it).
    char values[96];
    std::snprintf(values, sizeof values, "\t%.9g\t%.9g\t%.9g\n", static_cast<double>(a), static_cast<double>(b),
                  static_cast<double>(a - b));
    std::string text("query\tquery token\tkey\tkey token\tA\tB\tA - B\n");
    text.append(std::to_string(i)).append("\t").append(token(labels->queries, i));
    text.append("\t").append(std::to_string(j)).append("\t").append(token(labels->keys, j));
    copy_to_clipboard(text.append(values));
}

// A matrix the view owns, as the shared pointer Sides holds (no owner: the view outlives the frame).
std::shared_ptr<const Matrix> unowned(const Matrix& m) { return {std::shared_ptr<const Matrix>(), &m}; }

const Mask* mask_of(const ModelTrace& trace) { return trace.mask ? &*trace.mask : nullptr; }

void draw_mode_buttons(CompareSettings& own, const ModelInfo& info) {
    if (own.mode == CompareMode::text_tower && !info.zero_shot) own.mode = CompareMode::two_heads;
    int mode = static_cast<int>(own.mode);
    constexpr std::pair<const char*, CompareMode> modes[] = {{"two heads", CompareMode::two_heads},
                                                             {"two layers", CompareMode::two_layers},
                                                             {"causal mask on vs off", CompareMode::mask_on_off},
                                                             {"disabled heads vs all on", CompareMode::ablation_on_off},
                                                             {"two inputs", CompareMode::two_inputs}};
    for (const auto& [label, value] : modes) {
        if (value != modes[0].second) same_line_if_fits(check_width(label));
        ImGui::RadioButton(label, &mode, static_cast<int>(value));
    }
    if (info.zero_shot) {   // both towers side by side
        same_line_if_fits(check_width("a label's text tower"));
        ImGui::RadioButton("a label's text tower", &mode, static_cast<int>(CompareMode::text_tower));
    }
    own.mode = static_cast<CompareMode>(mode);
}

// The job behind the head pairs' table: each head of layer la_index against each of layer lb_index.
BackgroundJobs::Work head_pairs_work(const std::shared_ptr<const Snapshot>& snapshot, int la_index, int lb_index) {
    return BackgroundJobs::job<Matrix>([snapshot, la_index, lb_index](const LoadControl& control) {
        // Through head_map: a streamed run computes each head's map here, off the UI thread.
        const auto n = static_cast<int>(snapshot->info.n_heads);
        auto table = std::make_shared<Matrix>(n, n);
        for (int i = 0; i < n; ++i) {
            control.report(static_cast<double>(i) / static_cast<double>(n));
            const std::shared_ptr<const Matrix> a = snapshot->head_map(la_index, i);
            for (int j = 0; j < n; ++j) {
                (*table)(i, j) =
                    static_cast<float>(compare_heads(*a, *snapshot->head_map(lb_index, j)).mean_js_divergence);
            }
        }
        return std::shared_ptr<const Matrix>(std::move(table));
    });
}

// The head pairs' divergences: rows the heads of layer A, columns those of layer B.
void draw_pairs_table(const AppState& state, int layer_b, const Matrix& pairs) {
    const auto n_a = static_cast<std::size_t>(pairs.rows());
    const auto n_b = static_cast<std::size_t>(pairs.cols());
    if (ImGui::BeginTable("pairs", static_cast<int>(n_b) + 1,
                          ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX)) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        for (std::size_t h = 0; h < n_b; ++h) {
            ImGui::TableNextColumn();
            ImGui::Text("%d.%zu", layer_b, h);
        }
        for (std::size_t i = 0; i < n_a; ++i) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%d.%zu", state.layer, i);
            for (std::size_t j = 0; j < n_b; ++j) {
                ImGui::TableNextColumn();
                const double js = pairs(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
                const Rgba8 c = colormap_lookup(state.colormap, static_cast<float>(1.0 - js));
                ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, IM_COL32(c.r, c.g, c.b, 110));
                ImGui::Text("%.3f", js);
            }
        }
        ImGui::EndTable();
    }
}

}   // namespace

void CompareView::draw(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInfo& info = shown.info;
    draw_mode_buttons(own_, info);

    // Typed values (Ctrl+click on a slider) can land outside the model.
    fit_b(info);
    Sides sides;
    sides.a = shown.head_map(state.layer, state.head);
    // Each side's mask, so that masked cells are grey, not drawn as weight 0: A's is the
    // shown run's; B's that of the run it comes from.
    sides.mask_a = context.mask();
    sides.mask_b = sides.mask_a;
    sides.a_title = numbered("head ", state.layer, state.head);
    switch (own_.mode) {
    case CompareMode::two_heads: choose_two_heads(context, sides); break;
    case CompareMode::two_layers: choose_two_layers(context, sides); break;
    case CompareMode::mask_on_off: choose_mask_on_off(context, sides); break;
    case CompareMode::ablation_on_off: choose_ablation_on_off(context, sides); break;
    case CompareMode::two_inputs: choose_two_inputs(context, sides); break;
    case CompareMode::text_tower: choose_text_tower(context, sides); break;
    }
    if (!sides.b) {
        ImGui::TextWrapped("%s", sides.waiting.c_str());
        return;
    }
    draw_side_by_side(context, sides);
    if (own_.mode == CompareMode::two_layers) draw_layer_pairs(context);
}

void CompareView::choose_two_heads(ViewContext& context, Sides& sides) {
    session::AppState& state = context.state();
    const ModelInfo& info = context.shown().info;
    follow_head_a(own_, state.layer, state.head, static_cast<int>(info.n_layers), static_cast<int>(info.n_heads));
    ImGui::SetNextItemWidth(px(160.0f));
    if (ImGui::SliderInt("layer B", &own_.b_layer, 0, static_cast<int>(info.n_layers) - 1, "%d",
                         ImGuiSliderFlags_AlwaysClamp)) {
        own_.b_chosen = true;
    }
    same_line_if_fits(labelled_width(px(160.0f), "head B"));
    ImGui::SetNextItemWidth(px(160.0f));
    if (ImGui::SliderInt("head B", &own_.b_head, 0, static_cast<int>(info.n_heads) - 1, "%d",
                         ImGuiSliderFlags_AlwaysClamp)) {
        own_.b_chosen = true;
    }
    sides.b = context.shown().head_map(own_.b_layer, own_.b_head);
    sides.b_title = numbered("head ", own_.b_layer, own_.b_head);
}

void CompareView::choose_two_layers(ViewContext& context, Sides& sides) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const ModelInfo& info = shown.info;
    ImGui::SetNextItemWidth(px(160.0f));
    ImGui::SliderInt("layer A", &state.layer, 0, static_cast<int>(info.n_layers) - 1, "%d",
                     ImGuiSliderFlags_AlwaysClamp);
    same_line_if_fits(labelled_width(px(160.0f), "layer B"));
    follow_head_a(own_, state.layer, state.head, static_cast<int>(info.n_layers), static_cast<int>(info.n_heads));
    ImGui::SetNextItemWidth(px(160.0f));
    if (ImGui::SliderInt("layer B", &own_.b_layer, 0, static_cast<int>(info.n_layers) - 1, "%d",
                         ImGuiSliderFlags_AlwaysClamp)) {
        own_.b_chosen = true;
    }
    state.layer = std::clamp(state.layer, 0, static_cast<int>(info.n_layers) - 1);
    own_.b_layer = std::clamp(own_.b_layer, 0, static_cast<int>(info.n_layers) - 1);
    // Averaged once per result and pair of layers, not every frame.
    if (const std::string means_key = context.result_key() + numbered(" ", state.layer, own_.b_layer);
        means_key != layer_means_key_) {
        layer_mean_a_ = layer_mean(shown, state.layer);
        layer_mean_b_ = layer_mean(shown, own_.b_layer);
        layer_means_key_ = means_key;
    }
    sides.a = unowned(layer_mean_a_);
    sides.b = unowned(layer_mean_b_);
    sides.a_title = "layer " + std::to_string(state.layer) + " (heads averaged)";
    sides.b_title = "layer " + std::to_string(own_.b_layer) + " (heads averaged)";
}

void CompareView::choose_mask_on_off(ViewContext& context, Sides& sides) {
    const session::Snapshot& shown = context.shown();
    const session::AppState& state = context.state();
    const VariantRun* flipped = shown.variant(flipped_run);
    if (flipped != nullptr && !flipped->error.empty()) {
        sides.waiting = "the flipped mask: " + flipped->error;
    } else if (flipped != nullptr && flipped->trace) {
        sides.b = shown.map_of(*flipped->trace, state.layer, state.head);
        sides.mask_b = mask_of(*flipped->trace);
        sides.a_title += shown.causal ? " (causal)" : " (no mask)";
        sides.b_title = numbered("head ", state.layer, state.head) + (shown.causal ? " (no mask)" : " (causal)");
    } else {
        sides.waiting = "computing the flipped mask...";
    }
}

void CompareView::choose_ablation_on_off(ViewContext& context, Sides& sides) {
    const session::Snapshot& shown = context.shown();
    const session::AppState& state = context.state();
    if (shown.intact) {
        sides.b = shown.map_of(*shown.intact, state.layer, state.head);
        sides.mask_b = mask_of(*shown.intact);
        sides.a_title += " (heads disabled)";
        sides.b_title = numbered("head ", state.layer, state.head) + " (every head on)";
    } else {
        sides.waiting = "No head is disabled: tick \"disable\" beside some heads (left panel), and this shows what "
                        "it changes downstream.";
    }
}

void CompareView::choose_two_inputs(ViewContext& context, Sides& sides) {
    const session::Snapshot& shown = context.shown();
    session::AppState& state = context.state();
    const bool image = shown.info.takes_image;
    ImGui::SetNextItemWidth(std::max(px(200.0f), ImGui::GetContentRegionAvail().x - px(160.0f)));
    if (image) {
        // A path applies on Enter: half-typed paths are not files to open.
        if (compare_image_source_ != own_.image_b) {
            compare_image_edit_ = own_.image_b;
            compare_image_source_ = own_.image_b;
        }
        if (ImGui::InputTextWithHint("input B", "another image file (path), then Enter", &compare_image_edit_,
                                     ImGuiInputTextFlags_EnterReturnsTrue)) {
            own_.image_b = compare_image_edit_;
        }
    } else {
        ImGui::InputTextWithHint("input B", "another sentence", &own_.text_b);
    }
    const std::string& other = image ? own_.image_b : own_.text_b;
    if (other.empty()) {
        sides.waiting = image ? "Type the path of a second picture above: this head on both, side by side."
                              : "Type a second sentence above: this head on both, side by side.";
    } else if (const VariantRun* b = shown.variant(second_input_run); b != nullptr && !b->error.empty()) {
        sides.waiting = "input B: " + b->error;
    } else if (b != nullptr && b->trace) {
        sides.b = shown.map_of(*b->trace, state.layer, state.head);
        sides.mask_b = mask_of(*b->trace);
        sides.a_title += " on input A";
        sides.b_title = numbered("head ", state.layer, state.head) + " on input B";
        if (b->input) sides.b_labels = &b->input->labels;
    } else {
        sides.waiting = "computing input B...";
    }
}

void CompareView::choose_text_tower(ViewContext& context, Sides& sides) {
    const session::Snapshot& shown = context.shown();
    const session::AppState& state = context.state();
    const ModelInfo& info = shown.info;
    const auto n_labels = static_cast<int>(shown.trace.prompt_traces.size());
    if (n_labels == 0 || static_cast<int>(shown.input.prompts.size()) != n_labels ||
        static_cast<int>(shown.input.prompt_names.size()) != n_labels) {
        sides.waiting = "Type labels in the Labels box (Ctrl+L): each label's text-tower maps are shown here beside "
                        "the image tower's.";
        return;
    }
    own_.b_label = std::clamp(own_.b_label, 0, n_labels - 1);
    const auto name_of = [&](int i) { return shown.input.prompt_names[static_cast<std::size_t>(i)]; };
    ImGui::SetNextItemWidth(px(220.0f));
    if (ImGui::BeginCombo("label", name_of(own_.b_label).c_str())) {
        for (int i = 0; i < n_labels; ++i) {
            if (ImGui::Selectable(name_of(i).c_str(), i == own_.b_label)) own_.b_label = i;
        }
        ImGui::EndCombo();
    }
    follow_head_a(own_, state.layer, state.head, static_cast<int>(info.label_layers),
                  static_cast<int>(info.label_heads));
    for (const auto& [name, value, count] : {std::tuple{"text layer", &own_.b_layer, info.label_layers},
                                             std::tuple{"text head", &own_.b_head, info.label_heads}}) {
        same_line_if_fits(labelled_width(px(140.0f), name));
        ImGui::SetNextItemWidth(px(140.0f));
        if (ImGui::SliderInt(name, value, 0, static_cast<int>(count) - 1, "%d", ImGuiSliderFlags_AlwaysClamp)) {
            own_.b_chosen = true;
        }
    }
    fit_b(info);
    const ModelTrace& text = shown.trace.prompt_traces[static_cast<std::size_t>(own_.b_label)];
    sides.b = unowned(
        text.layers[static_cast<std::size_t>(own_.b_layer)].heads[static_cast<std::size_t>(own_.b_head)].weights);
    sides.mask_b = mask_of(text);
    sides.b_labels = &shown.input.prompts[static_cast<std::size_t>(own_.b_label)].labels;
    sides.a_title += " of the image tower";
    sides.b_title =
        numbered("head ", own_.b_layer, own_.b_head) + " of the text tower on \"" + name_of(own_.b_label) + "\"";
}

void CompareView::draw_side_by_side(ViewContext& context, const Sides& sides) {
    const session::AppState& state = context.state();
    const Matrix* a = sides.a.get();
    const Matrix* b = sides.b.get();
    const bool same_shape = a->rows() == b->rows() && a->cols() == b->cols();
    if (same_shape) {
        const HeadComparison numbers = compare_heads(*a, *b);
        ImGui::Text("max |A - B| = %.4f    mean Jensen-Shannon divergence = %.4f bits (%d rows)",
                    numbers.max_abs_difference, numbers.mean_js_divergence, numbers.rows_compared);
    } else {
        ImGui::Text("A is %ld x %ld and B %ld x %ld positions: side by side, no difference map",
                    static_cast<long>(a->rows()), static_cast<long>(a->cols()), static_cast<long>(b->rows()),
                    static_cast<long>(b->cols()));
    }
    // A and B on one scale (the larger max of the two); the difference diverging.
    const float max = std::max({a->maxCoeff(), b->maxCoeff(), 1e-12f});
    const float side = std::clamp((ImGui::GetContentRegionAvail().x - px(40.0f)) / 3.0f, px(96.0f), px(840.0f));
    const std::string key = numbered("cmp", state.layer, state.head) + numbered("-", own_.b_layer, own_.b_head) + "m" +
                            std::to_string(static_cast<int>(own_.mode)) + "l" + std::to_string(own_.b_label);
    const HeatmapTexture& ta =
        context.textures().get(key + "a", [&] { return heatmap_mip_levels(*a, sides.mask_a, state.colormap, max); });
    const HeatmapTexture& tb =
        context.textures().get(key + "b", [&] { return heatmap_mip_levels(*b, sides.mask_b, state.colormap, max); });
    const HeatmapLabels labels_a{context.shown().input.labels, context.shown().column_labels()};
    const HeatmapLabels labels_b = sides.b_labels ? HeatmapLabels{*sides.b_labels, *sides.b_labels} : labels_a;
    // One hover for the three maps: the cell's tokens and its value in each.
    const HoverLines hover = [&](int i, int j) { describe_cell(sides, same_shape ? &labels_a : nullptr, i, j); };
    const auto panel = [&](const char* id, const std::string& title, const Matrix& m, const Mask* mask,
                           const HeatmapTexture& t, const HeatmapLabels& labels, const HoverLines& lines) {
        ImGui::BeginGroup();
        ImGui::TextUnformatted(title.c_str());
        draw_heatmap(id, m, nullptr, mask, t, labels, ImVec2(side, side), zoom_, MapDrag::pans, -1, lines);
        ImGui::EndGroup();
    };
    // Two maps of different sizes (two inputs) zoom alike only by chance: B keeps to the fit.
    MapZoom unzoomed;
    panel("A", "A: " + sides.a_title, *a, sides.mask_a, ta, labels_a, same_shape ? hover : HoverLines{});
    ImGui::SameLine();
    if (same_shape) {
        panel("B", "B: " + sides.b_title, *b, sides.mask_b, tb, labels_b, hover);
        ImGui::SameLine();
        // Weights that differ by less than this are two sums' rounding, not a difference:
        // drawn as none rather than spread over the whole colour scale.
        constexpr float least_difference = 1e-4f;
        const Matrix diff = *a - *b;
        const bool none = diff.size() == 0 || diff.cwiseAbs().maxCoeff() < least_difference;
        panel("D", none ? "A - B: none above 0.0001" : "A - B", diff, nullptr,
              context.signed_texture(key + "d", diff, nullptr, least_difference), labels_a, hover);
    } else {
        ImGui::BeginGroup();
        ImGui::TextUnformatted(("B: " + sides.b_title).c_str());
        draw_heatmap("B", *b, nullptr, sides.mask_b, tb, labels_b, ImVec2(side, side), unzoomed);
        ImGui::EndGroup();
    }
    colour_legend(state.colormap, "0", "max of A, B", sides.mask_a != nullptr || sides.mask_b != nullptr);
    if (same_shape) {
        same_line_if_fits(colour_legend_width("B larger", "A larger"));
        colour_legend(Colormap::coolwarm, "B larger", "A larger", false);
    }
}

// Every head of layer A against every head of layer B.
void CompareView::draw_layer_pairs(ViewContext& context) {
    const session::Snapshot& shown = context.shown();
    const session::AppState& state = context.state();
    const auto& la = shown.trace.layers[static_cast<std::size_t>(state.layer)].heads;
    const auto& lb = shown.trace.layers[static_cast<std::size_t>(own_.b_layer)].heads;
    ImGui::Text("Jensen-Shannon divergence (bits) between each head of layer %d (rows) and of layer %d (columns)",
                state.layer, own_.b_layer);
    // Every head pair's divergence (H x H maps of T x T): on the view jobs' thread.
    const std::string pairs_key = "pairs " + context.result_key() + numbered(" ", state.layer, own_.b_layer);
    const BackgroundJobs::Work work = head_pairs_work(context.shown_ptr(), state.layer, own_.b_layer);
    context.view_jobs().start(pairs_key, work);
    draw_job_progress(context.view_jobs(), pairs_key, "comparing head pairs", work);
    const auto pairs = context.view_jobs().result<Matrix>(pairs_key);
    if (!pairs || pairs->rows() != static_cast<Eigen::Index>(la.size()) ||
        pairs->cols() != static_cast<Eigen::Index>(lb.size())) {
        return;
    }
    draw_pairs_table(state, own_.b_layer, *pairs);
}

std::unique_ptr<View> make_compare_view() { return std::make_unique<CompareView>(); }

}   // namespace headscope::ui
