#include "core/tensor/memory_reuse.h"

#include <cstdlib>   // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cstdint>

namespace headscope {

void reuse_freed_memory() {
#if defined(__GLIBC__)
    // No block is mapped on its own (M_MMAP_MAX 0; the threshold too, should a glibc
    // ignore that), and every thread allocates from the one heap: a thread's own arena
    // maps any block larger than its 64 MiB heaps whatever M_MMAP_MAX says, and unmaps it
    // when it is freed. GPT-2's [T, V] logits at T = 1,000 (200 MB) were such a block.
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_ARENA_MAX, 1);
    // What a run frees is what the next one needs; 1 GiB covers GPT-2 small's 144 maps at
    // T=1024 (576 MiB) with room for its activations.
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::size_t own_mapping = 32u << 20;   // glibc's largest M_MMAP_THRESHOLD
    constexpr std::uintptr_t huge_page = 2u << 20;
    if (data == nullptr || bytes < own_mapping) return;
    // The whole huge pages inside the block: advice past its ends would reach other memory.
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge_page - 1) & ~(huge_page - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge_page - 1);
    if (end > begin)
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);   // advice: a refusal is harmless
#else
    (void)data;
    (void)bytes;
#endif
}

}   // namespace headscope
