#pragma once
// Threads that compute for the window (the worker, the background jobs) run behind it.

namespace headscope::session {

// Puts the calling thread at SCHED_IDLE: computing yields to drawing. A forward runs on
// every core (core/tensor/parallel.h) and the window must keep 30 fps meanwhile; at
// SCHED_IDLE a thread of the window that wakes preempts it at once, where nice 10 still let
// a frame wait behind it (docs/performance.md). The threads the caller then starts for a
// forward inherit the policy. The cost: other busy programs on the machine come first too.
void compute_at_idle_priority();

}   // namespace headscope::session
