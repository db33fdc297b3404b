#include "session/snapshot.h"

namespace headscope::session {

double Snapshot::kept_bytes() const {
    double bytes = trace_bytes(trace);
    if (flipped) bytes += trace_bytes(*flipped);
    if (intact) bytes += trace_bytes(*intact);
    if (other_trace) bytes += trace_bytes(*other_trace);
    for (const Matrix& thumbnail : thumbnails) bytes += static_cast<double>(thumbnail.size()) * sizeof(float);
    return bytes;
}

}   // namespace headscope::session
