#include "session/predictions.h"

#include "core/analysis/top_predictions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace headscope::session {

namespace {

std::vector<PredictionLine> lines_of(const Snapshot& snapshot, std::span<const float> row,
                                     std::span<const float> other_row, int k) {
    std::vector<PredictionLine> lines;
    std::vector<Eigen::Index> indices;
    const LabelScore score = snapshot.info.label_score;
    for (const Prediction& p : top_predictions(row, k, score)) {
        PredictionLine line;
        line.index = p.index;
        line.probability = p.probability;
        const auto& labels = snapshot.output_labels;
        line.label = printable_label(labels && static_cast<std::size_t>(p.index) < labels->size()
                                         ? (*labels)[static_cast<std::size_t>(p.index)]
                                         : std::to_string(p.index));
        lines.push_back(std::move(line));
        indices.push_back(p.index);
    }
    const std::vector<float> other = other_row.empty()
                                         ? std::vector<float>(indices.size(), std::numeric_limits<float>::quiet_NaN())
                                         : probabilities_at(other_row, indices, score);
    for (std::size_t i = 0; i < lines.size(); ++i) lines[i].other = other[i];
    return lines;
}

bool is_mask_token(const std::string& label) { return label == "[MASK]" || label == "<mask>"; }

}   // namespace

PredictionTarget prediction_target(const Snapshot& snapshot, int query) {
    PredictionTarget target;
    if (snapshot.info.zero_shot) {
        target.kind = PredictionKind::labels;
        if (snapshot.logit_rows() > 0) target.rows = {0};
        return target;
    }
    const auto T = static_cast<int>(snapshot.input.labels.size());
    if (snapshot.logit_rows() == 0 || T == 0) return target;
    const bool chosen = query >= 0 && query < T;
    if (snapshot.logit_rows() == T) {
        if (snapshot.info.causal) {
            target.kind = PredictionKind::next_token;
            target.rows = {chosen ? query : T - 1};
        } else {
            target.kind = PredictionKind::fill_in;
            if (chosen) {
                target.rows = {query};
            } else {
                for (int t = 0; t < T; ++t) {
                    if (is_mask_token(snapshot.input.labels[static_cast<std::size_t>(t)])) target.rows.push_back(t);
                }
            }
        }
        return target;
    }
    target.kind = PredictionKind::classes;
    target.rows = {0};
    return target;
}

PredictionTable prediction_table(const Snapshot& snapshot, int row, int k) {
    PredictionTable table;
    table.row = row;
    const bool row_kept = snapshot.logits_kept(snapshot.trace, row) &&
                          (!snapshot.intact_logits || !snapshot.intact || snapshot.logits_kept(*snapshot.intact, row));
    if (snapshot.numbers_pending && !row_kept) {
        table.waiting = true;
        return table;
    }
    const Matrix logits = snapshot.logits_row(snapshot.trace, row);
    if (logits.size() == 0) return table;
    const Matrix intact =
        snapshot.intact_logits && snapshot.intact ? snapshot.logits_row(*snapshot.intact, row) : Matrix();
    const bool compare = intact.size() == logits.size();
    const std::span<const float> shown_row = logits_row(logits, 0);
    const std::span<const float> intact_row = compare ? logits_row(intact, 0) : std::span<const float>();
    table.shown = lines_of(snapshot, shown_row, intact_row, k);
    if (compare) table.intact = lines_of(snapshot, intact_row, shown_row, k);
    return table;
}

std::string printable_label(const std::string& label) {
    std::string out;
    out.reserve(label.size());
    for (const char c : label) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n') {
            out.append("\\n");
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c == '\r') {
            out.append("\\r");
        } else if (byte < 0x20 || byte == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            out.append(escaped);
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::string predictions_tsv(const std::vector<PredictionTable>& tables) {
    const bool intact = std::any_of(tables.begin(), tables.end(), [](const PredictionTable& t) {
        return std::any_of(t.shown.begin(), t.shown.end(),
                           [](const PredictionLine& l) { return std::isfinite(l.other); });
    });
    std::string text("position\trank\toutput\tprobability");
    if (intact) text.append("\tintact probability");
    text.append("\n");
    char number[32];
    for (const PredictionTable& table : tables) {
        for (std::size_t rank = 0; rank < table.shown.size(); ++rank) {
            const PredictionLine& line = table.shown[rank];
            text.append(std::to_string(table.row)).append("\t").append(std::to_string(rank + 1)).append("\t");
            text.append(printable_label(line.label));
            std::snprintf(number, sizeof number, "\t%.6g", static_cast<double>(line.probability));
            text.append(number);
            if (intact && std::isfinite(line.other)) {
                std::snprintf(number, sizeof number, "\t%.6g", static_cast<double>(line.other));
                text.append(number);
            }
            text.append("\n");
        }
    }
    return text;
}

}   // namespace headscope::session
