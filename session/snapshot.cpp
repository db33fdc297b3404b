#include "session/snapshot.h"

#include <algorithm>

namespace headscope::session {

double Snapshot::kept_bytes() const {
    double bytes = trace_bytes(trace);
    if (intact) bytes += trace_bytes(*intact, &trace);   // the layers before the first ablated one are shared
    for (const auto& [name, run] : variants) {
        if (run.trace) bytes += trace_bytes(*run.trace);
    }
    for (const Matrix& thumbnail : thumbnails) bytes += static_cast<double>(thumbnail.size()) * sizeof(float);
    return bytes;
}

Matrix Snapshot::logits_row(const ModelTrace& run, int row) const {
    const Eigen::Index rows = logit_rows();
    if (run.logits.size() == 0 || row < 0 || row >= rows) return {};
    const Eigen::Index kept_from = std::max<Eigen::Index>(0, rows - run.logits.rows());   // the kept rows are the last

    if (row >= kept_from) return run.logits.row(row - kept_from);
    if (!model_ref) return {};
    return model_ref->logits_rows(run, row, 1);
}

bool Snapshot::logits_kept(const ModelTrace& run, int row) const {
    const Eigen::Index rows = logit_rows();
    return run.logits.size() != 0 && row >= rows - run.logits.rows() && row < rows;
}

Eigen::Index Snapshot::logit_rows() const {
    if (trace.logits.size() == 0) return 0;
    // A run that kept its last rows of a head at every position (a decoder's) has the
    // final hidden state of every position to compute the others from.
    const bool last_rows_only = info.causal && trace.logits.rows() < trace.hidden.rows();
    return last_rows_only ? trace.hidden.rows() : trace.logits.rows();
}

}   // namespace headscope::session
