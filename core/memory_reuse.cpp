#include "core/memory_reuse.h"

#include <cstdlib>   // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace headscope {

void reuse_freed_memory() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    // What a run frees is what the next one needs; 1 GiB covers GPT-2 small's 144 maps at
    // T=1024 (576 MiB) with room for its activations.
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

void keep_freed_heap() {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
#endif
}

} // namespace headscope
