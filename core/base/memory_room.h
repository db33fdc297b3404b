#pragma once
// How much more memory this process may take, from every limit that applies: the
// machine's RAM (three quarters of it, so the rest of the desktop survives), `ulimit -v`
// (RLIMIT_AS, against the address space already mapped) and the memory cgroup (v2's
// memory.max or v1's memory.limit_in_bytes, against what the group already uses).
// Checked before a large allocation whose size comes from the input, so a run that
// cannot fit is one clear line, not an out-of-memory kill halfway through.

#include <string>

namespace headscope {

struct MemoryRoom {
    double bytes = 0;    // what may still be allocated
    std::string limit;   // which limit, for messages: "3/4 of this machine's 24.0 GB of RAM", "ulimit -v (1.0 GB)"
};

// The tightest of the limits; bytes is +infinity when none can be read.
MemoryRoom memory_room();

// This process's resident memory and the machine's RAM, in bytes (0 where unreadable),
// for a window's memory line.
struct MachineMemory {
    double resident = 0;
    double ram = 0;
};
MachineMemory machine_memory();

// "1.2 GB", "1.5 TB": bytes in the units messages use.
std::string gigabytes(double bytes);

// Throws "<what>: needs N GB, more than the M GB left under <limit>; <advice>" when
// `bytes` do not fit.
void check_memory_room(double bytes, const std::string& what, const std::string& advice);

}   // namespace headscope
