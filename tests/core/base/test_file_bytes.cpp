// Reading small input files whole (core/base/file_bytes.h): files that report no size,
// the cap, and why a path cannot be reached.
#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

using namespace headscope;
using headscope::test::TempDir;
using headscope::test::write_bytes;

TEST_CASE("read_file_bytes: a /proc file reports size 0 and is read to its end") {
    const std::string status = read_file_bytes("/proc/self/status", 1 << 20, "a text file");
    CHECK(status.rfind("Name:", 0) == 0);
    CHECK(status.size() > 100);
}

TEST_CASE("read_file_bytes: the cap holds however the size is found") {
    TempDir dir;
    write_bytes(dir.file("big.txt"), std::string(3 << 20, 'a'));
    CHECK_THROWS_WITH_AS(
        read_file_bytes(dir.file("big.txt"), 2 << 20, "a sentence file"),
        (dir.file("big.txt") + ": 3145728 bytes, more than the 2 MiB a sentence file may have").c_str(), Error);
    // /proc/self/maps says 0 bytes and holds more than 16 bytes: stopped at the cap.
    CHECK_THROWS_AS(read_file_bytes("/proc/self/maps", 16, "a text file"), Error);
}

TEST_CASE("why_unreachable: a loop, a dangling link and a missing file are told apart") {
    TempDir dir;
    std::filesystem::create_symlink(dir.file("loop"), dir.file("loop"));
    std::filesystem::create_symlink(dir.file("gone"), dir.file("dangling"));
    CHECK(why_unreachable(dir.file("loop")) == "a loop of symlinks");
    CHECK(why_unreachable(dir.file("dangling")) == "a symlink to " + dir.file("gone") + ", which does not exist");
    CHECK(why_unreachable(dir.file("missing")) == "no such file");
    CHECK_THROWS_WITH_AS(read_file_bytes(dir.file("loop"), 100, "a text file"),
                         (dir.file("loop") + ": a loop of symlinks").c_str(), Error);
}
