#pragma once
// A forward pass allocates every head's map afresh, and an interactive session frees
// the previous run's as it replaces it. glibc hands blocks of a few MB straight back to
// the kernel and maps new ones on the next run, so each run paid a page fault per 4 KiB
// of maps (measured: a third of one T=1024 attention layer's time). Programs call this
// once at start so that freed blocks stay in the process and are reused.

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

} // namespace headscope
