#pragma once
// A forward pass allocates every head's map afresh, and an interactive session frees
// the previous run's as it replaces it. glibc hands blocks of a few MB straight back to
// the kernel and maps new ones on the next run, so each run paid a page fault per 4 KiB
// of maps (measured: a third of one T=1024 attention layer's time). Programs call this
// once at start so that freed blocks stay in the process and are reused.

#include <cstddef>

namespace headscope {

// Blocks up to 32 MiB (glibc's largest setting: one T=2896 map) come from the heap, and
// freed heap memory is kept for reuse rather than trimmed. Idempotent. Both programs:
// the window once kept glibc's default for blocks over 128 KiB, so that a long session's
// heap would not fragment, and paid for it with every run's maps faulted in afresh (a
// quarter of a head toggle's time at T = 1,000); the soak test's 1,000 actions grow RSS
// by a few MiB with reuse.
void reuse_freed_memory();

// Asks the kernel to back a freshly allocated block with 2 MiB pages (Linux transparent
// huge pages, which Debian leaves to programs that ask: "madvise"), before it is first
// written. For blocks of 32 MiB and more only: glibc maps those on their own, so the
// advice splits no heap mapping; smaller ones are left as they are. GPT-2's LM-head
// logits at T=1024 (206 MB, new each forward) took 50,000 page faults of 4 KiB per
// forward. A no-op elsewhere, and where the kernel declines.
void advise_huge_pages(void* data, std::size_t bytes);

}   // namespace headscope
