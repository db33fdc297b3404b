#pragma once
// What the predictions panel shows, worked out from a Snapshot without the model (the
// worker put the logits, the intact logits and the column labels in it): which logits
// rows to show, and each row's top-k with the intact model's probabilities beside the
// ablated ones. No GL or ImGui here, so it is unit-tested without a window.

#include "session/snapshot.h"

#include <string>
#include <vector>

namespace headscope::session {

enum class PredictionKind {
    none,         // the model has no head (the demo models, a bare encoder)
    next_token,   // causal language model: row t predicts token t + 1 (GPT-2)
    fill_in,      // per-token logits without a causal mask: what fits at a position (BERT MLM)
    classes,      // one row of class logits (ViT / DeiT classifiers)
    labels,       // zero-shot (CLIP): one row of scores of the labels given with the picture (none yet: no rows)
};

struct PredictionTarget {
    PredictionKind kind = PredictionKind::none;
    std::vector<int> rows;   // logits rows to show; fill_in without a choice: the [MASK] positions (may be empty)
};

// Next token: after the pinned query, else after the last token. Fill-in: at the pinned
// query, else at every [MASK] / <mask> token. Classes: the one row.
PredictionTarget prediction_target(const Snapshot& snapshot, int query);

struct PredictionLine {
    Eigen::Index index = 0;     // the logit column
    std::string label;          // as a person reads it, control characters escaped
    float probability = 0.0f;   // in the run this list ranks
    float other = 0.0f;         // the same column's probability in the other run (NaN when there is none)
};

struct PredictionTable {
    int row = 0;
    // Left for the snapshot's numbers (Snapshot::numbers_pending): its maps came first and
    // the row's logits are not among those kept yet; computing them would hold up the
    // window's frame. `shown` and `intact` are then empty.
    bool waiting = false;
    std::vector<PredictionLine> shown;    // top-k of the snapshot's run (with its disabled heads); other = intact
    std::vector<PredictionLine> intact;   // when heads are disabled: top-k with every head on; other = ablated
};

// The top `k` of logits row `row` (softmax, core/top_predictions), labelled from the
// snapshot; waiting where the row is still to come with the numbers.
PredictionTable prediction_table(const Snapshot& snapshot, int row, int k);

// The tables as text to paste into a spreadsheet: a header, then one tab-separated line
// per output (position, rank from 1, output, probability; with heads disabled, the
// intact model's probability of the same output too).
std::string predictions_tsv(const std::vector<PredictionTable>& tables);

// A label on one line: newlines, tabs and other control characters as escapes (\n, \t, \x01).
std::string printable_label(const std::string& label);

}   // namespace headscope::session
