#include "ui/panels/predictions_panel.h"

#include "ui/widgets/draw_helpers.h"
#include "ui/widgets/ui_scale.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace headscope::ui {

using namespace session;

namespace {

// The predictions panel's bars: the run on screen (with its disabled heads) and the
// intact model beside it, each on a track of its own colour (also what the GUI tests count).
constexpr ImU32 prediction_bar = IM_COL32(255, 166, 48, 255);
constexpr ImU32 prediction_track = IM_COL32(70, 52, 30, 255);
constexpr ImU32 intact_bar = IM_COL32(86, 180, 233, 255);
constexpr ImU32 intact_track = IM_COL32(28, 58, 76, 255);
constexpr float bar_width_1x = 120.0f;   // ui_scale.h

// A probability as a bar on its track, at the cursor, one text line high.
// A probability as a percentage: one decimal, or two significant digits below 0.1% (a
// sigmoid's no is often 1e-5, which one decimal would show as nothing at all), and below
// 0.001% a bound; the exact value on hover.
void probability_text(float probability) {
    const double percent = 100.0 * static_cast<double>(probability);
    if (percent >= 0.1 || percent <= 0.0) {
        ImGui::Text("%5.1f%%", percent);
    } else if (percent >= 0.001) {
        ImGui::Text("%.2g%%", percent);
    } else {
        ImGui::TextUnformatted("<0.001%");
    }
    if (percent > 0.0 && percent < 0.1 && ImGui::IsItemHovered()) ImGui::SetTooltip("%.3g%%", percent);
}

void probability_bar(float probability, ImU32 bar, ImU32 track) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float height = ImGui::GetTextLineHeight();
    const float bar_width = px(bar_width_1x);
    const float p = std::isfinite(probability) ? std::clamp(probability, 0.0f, 1.0f) : 0.0f;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    // Whole pixels: flat colours without blended edges.
    const float x0 = std::floor(origin.x);
    const float y0 = std::floor(origin.y + 2.0f);
    const float y1 = std::floor(origin.y + height - 1.0f);
    draw->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + bar_width, y1), track);
    draw->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + std::round(bar_width * p), y1), bar);
    ImGui::Dummy(ImVec2(bar_width, height));
}

void draw_header_row(const Snapshot& shown, const PredictionTable& table, bool compare, int n_disabled) {
    const auto& labels = shown.input.labels;
    ImGui::TableNextRow();
    if (compare) {
        ImGui::TableNextColumn();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(intact_bar), "intact model");
        ImGui::TableNextColumn();
        ImGui::TableNextColumn();
    }
    ImGui::TableNextColumn();
    if (compare) {
        char title[48];
        std::snprintf(title, sizeof title, "%d head%s disabled", n_disabled, n_disabled == 1 ? "" : "s");
        // The label column is narrow in a small window: the short form rather than a cut one.
        if (ImGui::CalcTextSize(title).x > ImGui::GetContentRegionAvail().x) {
            std::snprintf(title, sizeof title, "%d off", n_disabled);
        }
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(prediction_bar), "%s", title);
    } else {
        ImGui::Text("at %d: \"%s\"", table.row, printable_label(labels[static_cast<std::size_t>(table.row)]).c_str());
    }
    if (compare) {
        ImGui::TableNextColumn();
        ImGui::TableNextColumn();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("vs intact");
    }
}

}   // namespace

int PredictionsPanel::lines_listed(const Snapshot& shown, const PredictionTarget& target) {
    if (target.kind != PredictionKind::labels) return n_predictions;
    return std::clamp(static_cast<int>(shown.input.prompts.size()), n_predictions, max_labels);
}

float PredictionsPanel::height(const Snapshot& shown, const PredictionTarget& target) {
    if (target.kind == PredictionKind::none) return 0.0f;
    // With heads disabled the KL line may wrap under the heading: room for it, so that the
    // last row is never cut.
    const float lines = static_cast<float>(lines_listed(shown, target)) + 2.5f + (shown.ablated ? 1.0f : 0.0f);
    return ImGui::GetTextLineHeightWithSpacing() * lines + ImGui::GetStyle().WindowPadding.y * 2;
}

const std::vector<PredictionTable>& PredictionsPanel::tables(const Snapshot& shown, const PredictionTarget& target) {
    if (generation_ != shown.generation || numbers_pending_ != shown.numbers_pending || rows_ != target.rows) {
        tables_.clear();
        for (const int row : target.rows) tables_.push_back(prediction_table(shown, row, lines_listed(shown, target)));
        generation_ = shown.generation;
        numbers_pending_ = shown.numbers_pending;
        rows_ = target.rows;
    }
    return tables_;
}

bool PredictionsPanel::draw_heading(const Snapshot& shown, const PredictionTarget& target) {
    const auto& labels = shown.input.labels;
    const char* hint = "(click a token in the Matrix or Tokens view to choose the position)";
    switch (target.kind) {
    case PredictionKind::none: return false;
    case PredictionKind::next_token: {
        const int t = target.rows.front();
        ImGui::Text("Next token after \"%s\" (position %d of %zu)",
                    printable_label(labels[static_cast<std::size_t>(t)]).c_str(), t, labels.size());
        if (shown.causal) {
            hint_beside(hint, false);   // the panel's height has no line to spare
        } else {
            ImGui::SameLine();
            // A language model without its mask sees the very tokens it is asked to predict.
            ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.4f, 1.0f),
                               "  (causal mask off: each position sees the next token)");
        }
        break;
    }
    case PredictionKind::fill_in:
        if (target.rows.empty()) {
            ImGui::TextUnformatted("What the model would put at a position: click a token in the Matrix or Tokens view "
                                   "(or write [MASK] in the sentence).");
            return false;
        }
        ImGui::TextUnformatted("Fill-ins");
        hint_beside(hint, false);
        break;
    case PredictionKind::classes: ImGui::TextUnformatted("Top classes"); break;
    case PredictionKind::labels: {
        const bool sigmoid = shown.info.label_score == LabelScore::sigmoid;
        if (target.rows.empty()) {
            ImGui::TextWrapped(sigmoid ? "Type labels in the Labels box, one per line (Ctrl+L): each is scored against "
                                         "the picture here on its own, a sigmoid as SigLIP computes it."
                                       : "Type labels in the Labels box, one per line (Ctrl+L): each is scored against "
                                         "the picture here, a softmax over the labels as CLIP computes it.");
            return false;
        }
        ImGui::TextUnformatted("Labels");
        ImGui::SameLine();
        ImGui::TextDisabled(sigmoid
                                ? "(each the sigmoid of exp(logit_scale) x cosine + logit_bias: they need not sum to 1)"
                                : "(softmax over exp(logit_scale) x cosine of the picture's and each label's "
                                  "embedding)");
        break;
    }
    }
    return true;
}

void PredictionsPanel::draw(const Snapshot& shown, const AppState& state) {
    const PredictionTarget target = prediction_target(shown, decoder_query(state));
    if (target.kind != PredictionKind::none && !target.rows.empty()) {
        // First on the line, where a narrow panel never cuts it off. Not while a table
        // waits for the run's numbers: a copy would leave it out without a word.
        const std::vector<PredictionTable>& all = tables(shown, target);
        const bool waiting =
            std::any_of(all.begin(), all.end(), [](const PredictionTable& table) { return table.waiting; });
        ImGui::BeginDisabled(waiting);
        if (ImGui::SmallButton("Copy")) copy_to_clipboard(predictions_tsv(all));
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
            ImGui::SetTooltip(waiting ? "waiting for the run's numbers"
                                      : "these predictions to the clipboard, tab-separated");
        }
        ImGui::SameLine();
    }
    if (!draw_heading(shown, target)) return;
    const auto n_disabled = static_cast<int>(state.disabled_heads.count() + state.disabled_encoder_heads.count() +
                                             state.disabled_cross_heads.count());
    const std::vector<PredictionTable>& shown_tables = tables(shown, target);
    // Intact beside ablated, also while a table waits for the numbers (the KL line's place kept).
    const bool compare =
        shown.ablated && std::any_of(shown_tables.begin(), shown_tables.end(), [](const PredictionTable& table) {
            return table.waiting || !table.intact.empty();
        });
    const bool kl = shown.trace.logits.size() != 0;
    if (compare && kl && (shown.numbers_pending || shown.effect)) {
        char text[112];
        if (shown.numbers_pending) {
            // The maps came first (Snapshot::numbers_pending): the line keeps its place.
            std::snprintf(text, sizeof text, "   KL(intact || ablated): measuring...");
        } else {
            std::snprintf(text, sizeof text,
                          shown.info.label_score == LabelScore::sigmoid
                              ? "   KL(intact || ablated) = %.4g nats, each label's yes-or-no, mean over the labels"
                          : shown.info.zero_shot  ? "   KL(intact || ablated) = %.4g nats, over the labels"
                          : shown.info.classifier ? "   KL(intact || ablated) = %.4g nats, over the classes"
                          : shown.trace.logits.rows() < shown.logit_rows()
                              // A long run kept the last row's logits alone (Keeps::logits_when_shown).
                              ? "   KL(intact || ablated) = %.4g nats, at the last position"
                              : "   KL(intact || ablated) = %.4g nats, mean over positions",
                          shown.effect->value);
        }
        // Beside the heading where it fits, else under it: never cut at the panel's edge.
        ImGui::SameLine();
        if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(text).x) ImGui::NewLine();
        ImGui::TextDisabled("%s", text);
    }
    const std::size_t n_tables = shown_tables.size();
    const float width = ImGui::GetContentRegionAvail().x / static_cast<float>(std::max<std::size_t>(1, n_tables));
    for (std::size_t n = 0; n < n_tables; ++n) {
        if (n > 0) ImGui::SameLine();
        ImGui::BeginGroup();
        ImGui::PushID(static_cast<int>(n));
        if (shown_tables[n].waiting) {
            ImGui::TextDisabled("at %d: computing...", shown_tables[n].row);
        } else {
            draw_table(shown, shown_tables[n], target, compare, n_disabled, width, n_tables);
        }
        ImGui::PopID();
        ImGui::EndGroup();
    }
    // Labels the text tower could not read: the others are scored, these named with why.
    for (const std::string& note : shown.input.prompts_left_out) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.6f, 0.4f, 1.0f));
        ImGui::TextWrapped("not scored: %s", note.c_str());
        ImGui::PopStyleColor();
    }
}

void PredictionsPanel::draw_table(const Snapshot& shown, const PredictionTable& table, const PredictionTarget& target,
                                  bool compare, int n_disabled, float width, std::size_t n_tables) {
    const int columns = compare ? 7 : 3;
    if (ImGui::BeginTable("top", columns, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX,
                          ImVec2(width - px(8.0f), 0.0f))) {
        const float bar_width = px(bar_width_1x);
        // "<0.001%" and "vs intact" fit a percentage's column, "+44.1 pts" the change's; the
        // labels take what is left (each column has a cell's padding on both sides).
        const float percent_width = ImGui::CalcTextSize("vs intact").x;
        const float change_width = ImGui::CalcTextSize("+100.0 pts").x;
        const float sides = compare ? 2.0f : 1.0f;
        const float padding = static_cast<float>(columns) * 2.0f * ImGui::GetStyle().CellPadding.x;
        const float label_width = std::clamp(
            (width - px(8.0f) - padding - sides * (bar_width + percent_width) - (compare ? change_width : 0.0f)) /
                sides,
            px(60.0f), px(220.0f));
        if (compare) {
            ImGui::TableSetupColumn("intact", ImGuiTableColumnFlags_WidthFixed, label_width);
            ImGui::TableSetupColumn("p0", ImGuiTableColumnFlags_WidthFixed, bar_width);
            ImGui::TableSetupColumn("%0", ImGuiTableColumnFlags_WidthFixed, percent_width);
        }
        ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthFixed, label_width);
        ImGui::TableSetupColumn("p", ImGuiTableColumnFlags_WidthFixed, bar_width);
        ImGui::TableSetupColumn("%", ImGuiTableColumnFlags_WidthFixed, percent_width);
        if (compare) ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, change_width);
        if (compare || n_tables > 1) draw_header_row(shown, table, compare, n_disabled);
        const auto quoted = [&](const std::string& label) {
            const bool named = target.kind == PredictionKind::classes || target.kind == PredictionKind::labels;
            const std::string text = named ? label : "\"" + label + "\"";
            ImGui::TextUnformatted(text.c_str());
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
        };
        for (std::size_t i = 0; i < table.shown.size(); ++i) {
            ImGui::TableNextRow();
            if (compare) {
                ImGui::TableNextColumn();
                if (i < table.intact.size()) {
                    const PredictionLine& line = table.intact[i];
                    quoted(line.label);
                    ImGui::TableNextColumn();
                    probability_bar(line.probability, intact_bar, intact_track);
                    ImGui::TableNextColumn();
                    probability_text(line.probability);
                } else {
                    ImGui::TableNextColumn();
                    ImGui::TableNextColumn();
                }
            }
            const PredictionLine& line = table.shown[i];
            ImGui::TableNextColumn();
            quoted(line.label);
            ImGui::TableNextColumn();
            probability_bar(line.probability, prediction_bar, prediction_track);
            ImGui::TableNextColumn();
            probability_text(line.probability);
            if (compare && std::isfinite(line.other)) {
                // Percentage points against the intact model's probability of the same output.
                ImGui::TableNextColumn();
                const float change = 100.0f * (line.probability - line.other);
                const ImVec4 colour = change >= 0.05f    ? ImVec4(0.45f, 0.85f, 0.45f, 1.0f)
                                      : change <= -0.05f ? ImVec4(1.0f, 0.5f, 0.45f, 1.0f)
                                                         : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
                // A change that rounds to nothing reads 0.0, not -0.0 or +0.0.
                if (std::abs(change) < 0.05f) {
                    ImGui::TextColored(colour, " 0.0 pts");
                } else {
                    ImGui::TextColored(colour, "%+.1f pts", change);
                }
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("intact model: %.3g%%", 100.0f * line.other);
            }
        }
        ImGui::EndTable();
    }
    if (table.shown.empty()) ImGui::TextDisabled("(no probabilities: the logits are not finite)");
}

}   // namespace headscope::ui
