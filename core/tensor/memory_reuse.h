#pragma once
// A forward pass allocates every head's map afresh, and an interactive session frees
// the previous run's as it replaces it. glibc hands blocks of a few MB straight back to
// the kernel and maps new ones on the next run, so each run paid a page fault per 4 KiB
// of maps (measured: a third of one T=1024 attention layer's time). Programs call this
// once at start so that freed blocks stay in the process and are reused.

#include <cstddef>

namespace headscope {

// Blocks up to 32 MiB (glibc's largest setting: one T=2896 map) come from the heap, and
// freed heap memory is kept for reuse rather than trimmed. Idempotent. For batch work
// (headscope-cli): in a long interactive session the heap fragments (measured +60 MiB
// over the window's 1,000-action soak test).
void reuse_freed_memory();

// The window: freed heap memory is kept, not trimmed, so that each frame's allocations
// (Mesa's software renderer allocates per draw call) reuse it instead of faulting fresh
// pages in (measured: the 12 x 12 model view of ViT-B/16 at 11 ms a frame, 4 ms with
// it); blocks over glibc's default 128 KiB, maps among them, still go back to the kernel
// when freed, so the heap does not fragment. Idempotent.
void keep_freed_heap();

// Asks the kernel to back a freshly allocated block with 2 MiB pages (Linux transparent
// huge pages, which Debian leaves to programs that ask: "madvise"), before it is first
// written. For blocks of 32 MiB and more only: glibc maps those on their own, so the
// advice splits no heap mapping; smaller ones are left as they are. GPT-2's LM-head
// logits at T=1024 (206 MB, new each forward) took 50,000 page faults of 4 KiB per
// forward. A no-op elsewhere, and where the kernel declines.
void advise_huge_pages(void* data, std::size_t bytes);

}   // namespace headscope
