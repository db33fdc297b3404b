#pragma once
// A forward pass allocates every head's map afresh, and an interactive session frees
// the previous run's as it replaces it. glibc hands big blocks straight back to the
// kernel and maps new ones on the next run, so each run paid a page fault per 4 KiB of
// maps (measured: a third of one T=1024 attention layer's time). Worse, on the virtual
// machines this is measured on, memory the kernel holds free for a few seconds is handed
// back to the host (free page reporting), and touching it again costs the host's faults,
// which no guest counter shows and which cost several times the guest's own. A window
// edits after rests, so its runs paid that for every block the previous run had unmapped
// (docs/performance.md). Programs call this once at start so that freed blocks stay in
// the process and are reused.

#include <cstddef>
#include <functional>

namespace headscope {

// Every block comes from the heap, whatever its size and whichever thread asks, and freed
// heap memory is kept for reuse (up to 1 GiB free at its top) rather than trimmed.
// Idempotent; call it before any thread starts. Both programs: the window once kept
// glibc's default for blocks over 128 KiB, so that a long session's heap would not
// fragment, and paid for it with every run's maps faulted in afresh (a quarter of a head
// toggle's time at T = 1,000); the soak test's 1,000 actions grow RSS by a few MiB with
// reuse. Blocks over 32 MiB (GPT-2's [T, V] logits) were still mapped and unmapped with
// each run until every thread shared the one heap. The price of the one heap: threads
// take its lock in turn, so the window's thread may wait for a malloc of the worker's (or
// a background job's), which run at SCHED_IDLE; that wait is short unless other programs keep every core busy
// (and then the worker's run is slow anyway). The forward's threads allocate nothing
// inside their parallel regions.
void reuse_freed_memory();

// Grows the heap's free memory, written once so the kernel has given it pages, to `bytes`,
// as far as the heap keeps it (its trim threshold above) and at most half the memory the
// kernel says is available; returns the bytes of free memory it added (0: enough was free,
// or none could be kept). `stop` is asked between steps of 32 MiB; what was written by then
// stays.
// Why: a window shows one run while it computes the next, so the first edit after a
// model's first run found no freed memory and faulted in all of the new run's (GPT-2
// small at T = 1,000: 180,000 faults, a first typed token 5x the later ones). The worker
// does this while it idles, asking for the shown run's size. New memory is asked to come
// in 2 MiB pages (advise_huge_pages). Only after reuse_freed_memory: a block mapped on its
// own ends it. A no-op under AddressSanitizer, whose allocator holds freed blocks back, and
// off glibc (or before 2.33, which has no mallinfo2).
std::size_t reserve_freed_memory(std::size_t bytes, const std::function<bool()>& stop);

// MemAvailable (/proc/meminfo) in bytes: what the kernel could give without swapping; 0
// where it cannot be read (reserve_freed_memory takes at most half).
std::size_t available_memory();

// Asks the kernel to back a freshly allocated block with 2 MiB pages (Linux transparent
// huge pages, which Debian leaves to programs that ask: "madvise"), before it is first
// written. For blocks of 32 MiB and more only, whose inner whole 2 MiB pages hold nothing
// else (smaller ones are left as they are, the heap's pages unsplit). GPT-2's LM-head
// logits at T=1024 (206 MB, new each forward) took 50,000 page faults of 4 KiB per
// forward. A no-op elsewhere, and where the kernel declines.
void advise_huge_pages(void* data, std::size_t bytes);

}   // namespace headscope
