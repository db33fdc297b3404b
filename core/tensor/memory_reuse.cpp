#include "core/tensor/memory_reuse.h"

#include <cstdlib>   // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

// AddressSanitizer's allocator holds freed blocks back (its quarantine): nothing to reserve.
#if defined(__SANITIZE_ADDRESS__)
#define HEADSCOPE_ADDRESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEADSCOPE_ADDRESS_SANITIZED 1
#endif
#endif

#if defined(__GLIBC__) && !defined(HEADSCOPE_ADDRESS_SANITIZED)
#if __GLIBC_PREREQ(2, 33)   // mallinfo2
#define HEADSCOPE_RESERVES_HEAP 1
#endif
#endif

namespace headscope {

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;
// The heap keeps up to this much free at its top (reuse_freed_memory).
constexpr std::size_t trim_threshold = 1024 * mib;

}   // namespace

std::size_t available_memory() {
    std::ifstream meminfo("/proc/meminfo");
    const std::string key = "MemAvailable:";
    for (std::string line; std::getline(meminfo, line);) {
        if (line.starts_with(key)) return std::strtoull(line.c_str() + key.size(), nullptr, 10) * 1024;   // kB
    }
    return 0;
}

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
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim_threshold));
#endif
}

std::size_t reserve_freed_memory(std::size_t bytes, const std::function<bool()>& stop) {
#if defined(HEADSCOPE_RESERVES_HEAP)
    const std::size_t free_before = mallinfo2().fordblks;
    if (free_before >= bytes) return 0;
    // Blocks of a step each, taken and written one at a time (the heap grows by a step only
    // once what it had free is taken), then freed: those from the heap's top back into it,
    // those from free chunks inside it back there; either way all that is then free was
    // written, even where `stop` ended it early. Not past the trim threshold (with room for
    // glibc's padding), whose top would be handed back.
    constexpr std::size_t step = 32 * mib;
    constexpr std::size_t page = 4096;
    const std::size_t top_limit_bytes = std::min(trim_threshold - 64 * mib, available_memory() / 2);
    std::vector<void*> held;
    held.reserve(top_limit_bytes / step + 1);   // no allocation between the blocks
    std::size_t held_bytes = 0;
    for (;;) {
        const struct mallinfo2 heap = mallinfo2();
        // What would be free with the blocks freed: it grows only as the heap does.
        if (heap.fordblks + held_bytes >= bytes || heap.keepcost + held_bytes + step > top_limit_bytes || stop()) break;
        void* block = std::malloc(step);
        if (block == nullptr) break;
        if (mallinfo2().hblkhd != heap.hblkhd) {
            // Mapped on its own, not from the heap: this process never called
            // reuse_freed_memory, and freeing it would hand it back. Nothing to keep.
            std::free(block);
            break;
        }
        held.push_back(block);
        held_bytes += step;
        advise_huge_pages(block, step);
        // Volatile: a write to memory that is freed unread is otherwise no write at all.
        auto* const cells = static_cast<volatile char*>(block);
        for (std::size_t at = 0; at < step; at += page) cells[at] = 0;
    }
    for (auto block = held.rbegin(); block != held.rend(); ++block) std::free(*block);   // the top's end first
    const std::size_t free_after = mallinfo2().fordblks;
    return free_after > free_before ? free_after - free_before : 0;
#else
    (void)bytes;
    (void)stop;
    return 0;
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
