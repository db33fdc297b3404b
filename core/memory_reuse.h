#pragma once
// A forward pass allocates every head's map afresh, and an interactive session frees
// the previous run's as it replaces it. glibc hands blocks of a few MB straight back to
// the kernel and maps new ones on the next run, so each run paid a page fault per 4 KiB
// of maps (measured: a third of one T=1024 attention layer's time). Programs call this
// once at start so that freed blocks stay in the process and are reused.

namespace headscope {

// Blocks up to 32 MiB (glibc's largest setting: one T=2896 map) come from the heap, and
// freed heap memory is kept for reuse rather than trimmed. Idempotent.
void reuse_freed_memory();

} // namespace headscope
