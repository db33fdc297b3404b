#include "session/idle_priority.h"

#include <sched.h>

namespace headscope::session {

void compute_at_idle_priority() {
    sched_param idle{};
    (void)::sched_setscheduler(0, SCHED_IDLE, &idle);   // a refusal leaves normal priority: slower frames, no fault
}

}   // namespace headscope::session
