// core/tensor/memory_reuse.h: advise_huge_pages marks the whole 2 MiB pages inside a big block
// for transparent huge pages (the kernel's "hg" flag on that mapping), and leaves small
// blocks, which may share the heap's mapping, alone; reuse_freed_memory keeps a freed big
// block in the process for the next, and reserve_freed_memory grows what it keeps.
#include "core/tensor/memory_reuse.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <malloc.h>
#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

namespace {

// The VmFlags of the mapping of this process that holds `address`; empty when none does.
std::string vm_flags_at(const void* address) { return headscope::test::smaps_line_at(address, "VmFlags:"); }

bool has_flag(const std::string& vm_flags, const std::string& flag) {
    return (vm_flags + " ").find(" " + flag + " ") != std::string::npos;
}

bool kernel_has_huge_pages() { return std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"); }

}   // namespace

TEST_CASE("advise_huge_pages: a 64 MiB block's inner 2 MiB pages are advised, a 1 MiB block is left alone") {
    if (!kernel_has_huge_pages()) {
        MESSAGE("this kernel has no transparent huge pages: nothing to check");
        return;
    }
    constexpr std::size_t big = 64u << 20;
    const std::unique_ptr<char[]> block(new char[big]);
    headscope::advise_huge_pages(block.get(), big);
    // The middle of the block lies in a whole 2 MiB page of it, wherever the block starts.
    const std::string big_flags = vm_flags_at(block.get() + big / 2);
    REQUIRE_FALSE(big_flags.empty());
    CHECK(has_flag(big_flags, "hg"));
    block[0] = 1;   // still the program's memory, writable end to end
    block[big - 1] = 2;
    CHECK(block[0] + block[big - 1] == 3);

    constexpr std::size_t small = 1u << 20;
    const std::unique_ptr<char[]> little(new char[small]);
    const bool advised_before = has_flag(vm_flags_at(little.get() + small / 2), "hg");
    headscope::advise_huge_pages(little.get(), small);
    CHECK(has_flag(vm_flags_at(little.get() + small / 2), "hg") == advised_before);
    headscope::advise_huge_pages(nullptr, big);   // nothing to advise: no effect, no crash
}

namespace {

long minor_faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// A block the size of GPT-2's logits at T = 1,000, written end to end (a page per 4 KiB).
void write_block(std::size_t bytes) {
    const std::unique_ptr<char[]> block(new char[bytes]);
    std::memset(block.get(), 1, bytes);
    CHECK(block[bytes - 1] == 1);
}

// The page faults of writing a new block of `bytes` on a thread of its own, as the window's
// worker allocates.
long faults_writing_on_new_thread(std::size_t bytes) {
    long faults = 0;
    std::thread([&] {
        const long before = minor_faults();
        write_block(bytes);
        faults = minor_faults() - before;
    }).join();
    return faults;
}

}   // namespace

TEST_CASE("reuse_freed_memory: a 200 MB block freed and asked for again is the same memory, no page faulted") {
    if (headscope::test::sanitized_build()) {
        MESSAGE("AddressSanitizer's allocator holds freed blocks back: nothing to check");
        return;
    }
    headscope::reuse_freed_memory();
    constexpr std::size_t logits = 200u << 20;
    write_block(logits);   // the heap grows to hold it once
    // Mapped on its own (glibc's default for a block this big, and a thread's own arena's
    // for any over 64 MiB) it would be unmapped when freed and fault in again: 51,200 pages
    // of 4 KiB, or 100 huge ones. From a heap that kept it: none.
    CHECK(faults_writing_on_new_thread(logits) < 50);
}

TEST_CASE("reserve_freed_memory: the heap then holds that much freed memory, written, and stops when told") {
    if (headscope::test::sanitized_build()) {
        MESSAGE("AddressSanitizer's allocator holds freed blocks back: nothing to reserve (a no-op there)");
        return;
    }
    headscope::reuse_freed_memory();
    constexpr std::size_t block = 300u << 20;
    if (headscope::available_memory() / 2 < block + (64u << 20)) {
        MESSAGE(
            "under 700 MiB available (other tests beside this one): the reserve would stop short, nothing to check");
        return;
    }
    const std::size_t free_before = mallinfo2().fordblks;
    // Told to stop at once: nothing taken, nothing added.
    CHECK(headscope::reserve_freed_memory(free_before + block, [] { return true; }) == 0);
    CHECK(mallinfo2().fordblks < free_before + (1u << 20));   // (give or take the test's own small blocks)
    // Already free: nothing to do.
    CHECK(headscope::reserve_freed_memory(free_before / 2, [] { return false; }) == 0);

    int steps = 0;
    const std::size_t added = headscope::reserve_freed_memory(free_before + block, [&] { return ++steps > 1000; });
    CHECK(added + (1u << 20) >= block);                      // glibc may keep a little of it as padding
    CHECK(steps >= static_cast<int>(block / (32u << 20)));   // asked before each step of 32 MiB
    CHECK(mallinfo2().fordblks + (1u << 20) >= free_before + block);

    // Told to stop after two steps: what was taken by then is kept, and no more.
    const std::size_t free_now = mallinfo2().fordblks;
    int asked = 0;
    const std::size_t partly = headscope::reserve_freed_memory(free_now + block, [&] { return ++asked > 2; });
    CHECK(partly <= (64u << 20) + (1u << 20));
    // A new run's block of that size, on the worker's thread: memory already faulted in
    // (without the reserve: 76,800 faults of 4 KiB, or 150 huge pages).
    CHECK(faults_writing_on_new_thread(block) < 50);
}
