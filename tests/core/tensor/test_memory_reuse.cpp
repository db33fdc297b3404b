// core/tensor/memory_reuse.h: advise_huge_pages marks the whole 2 MiB pages inside a big block
// for transparent huge pages (the kernel's "hg" flag on that mapping), and leaves small
// blocks, which may share the heap's mapping, alone.
#include "core/tensor/memory_reuse.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>

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
