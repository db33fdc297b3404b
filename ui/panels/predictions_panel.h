#pragma once
// Under the views, for models with a head: the top predictions at the chosen position
// (next token, fill-in, or classes), and beside them the intact model's when heads are
// disabled, with each output's change in percentage points.

#include "session/app_state.h"
#include "session/predictions.h"
#include "session/snapshot.h"

#include <cstdint>
#include <vector>

namespace headscope::ui {

class PredictionsPanel {
public:
    static constexpr int n_predictions = 5;
    // A zero-shot model's labels are all listed (they were typed), up to this many.
    static constexpr int max_labels = 12;
    // The lines each table lists for `target`.
    static int lines_listed(const session::Snapshot& shown, const session::PredictionTarget& target);

    // The panel's height for `target` (0: none).
    static float height(const session::Snapshot& shown, const session::PredictionTarget& target);
    void draw(const session::Snapshot& shown, const session::AppState& state);

private:
    // Rows for the shown snapshot, recomputed when it or the query changes.
    const std::vector<session::PredictionTable>& tables(const session::Snapshot& shown,
                                                        const session::PredictionTarget& target);
    // The heading line; false when there is nothing to show under it.
    static bool draw_heading(const session::Snapshot& shown, const session::PredictionTarget& target);
    static void draw_table(const session::Snapshot& shown, const session::PredictionTable& table,
                           const session::PredictionTarget& target, bool compare, int n_disabled, float width,
                           std::size_t n_tables);

    std::uint64_t generation_ = 0;
    bool numbers_pending_ = false;   // of that generation's snapshot: its numbers follow under the same one
    std::vector<int> rows_;
    std::vector<session::PredictionTable> tables_;
};

}   // namespace headscope::ui
