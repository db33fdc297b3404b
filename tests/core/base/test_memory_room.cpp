// The memory check before a forward (core/base/memory_room.h, check_maps_fit_in_memory):
// the maps, their copies and the working memory, against the tightest limit, ulimit -v
// included.
#include "core/base/error.h"
#include "core/base/memory_room.h"
#include "core/models/model.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>

using namespace headscope;

namespace {

ModelInfo twelve_by_twelve() {
    ModelInfo info;
    info.name = std::string(1, 'm');
    info.n_layers = 12;
    info.n_heads = 12;
    info.width = 64;
    info.mlp_width = 256;
    return info;
}

std::string refusal(const ModelInfo& info, Eigen::Index T, int copies = 1) {
    try {
        check_maps_fit_in_memory(info, T, copies);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("check_maps_fit_in_memory: the maps and the forward's working memory, before allocating them") {
    const ModelInfo info = twelve_by_twelve();
    CHECK(refusal(info, 1024).empty());   // 604 MB of maps
    const std::string huge = refusal(info, 1 << 20);
    CHECK(huge.find("m: 1048576 positions: 12 x 12 maps of 1048576 x 1048576: needs 738.9 TB, more than the") == 0);
    CHECK(huge.find(" GB left under ") != std::string::npos);
    CHECK(huge.find("; use a shorter input (images: --max-patches)") != std::string::npos);
    const MemoryRoom room = memory_room();
    CHECK(room.bytes > 0);
    CHECK(!room.limit.empty());
}

TEST_CASE("memory_room: ulimit -v is a limit too, counted against what is already mapped") {
    if (test::sanitized_build()) {
        MESSAGE("AddressSanitizer maps terabytes of shadow memory: ulimit -v is not tried");
        return;
    }
    rlimit saved{};
    REQUIRE(::getrlimit(RLIMIT_AS, &saved) == 0);
    std::ifstream statm("/proc/self/statm");
    double pages = 0;
    statm >> pages;
    const double mapped = pages * static_cast<double>(::sysconf(_SC_PAGESIZE));
    rlimit tight = saved;
    tight.rlim_cur = static_cast<rlim_t>(mapped + 2e9);   // 2 GB more than now
    if (saved.rlim_max != RLIM_INFINITY && tight.rlim_cur > saved.rlim_max) tight.rlim_cur = saved.rlim_max;
    REQUIRE(::setrlimit(RLIMIT_AS, &tight) == 0);
    const ModelInfo info = twelve_by_twelve();
    const std::string once = refusal(info, 1024);      // 0.6 GB
    const std::string kept = refusal(info, 1024, 4);   // 2.5 GB: the maps held four times
    const MemoryRoom room = memory_room();
    REQUIRE(::setrlimit(RLIMIT_AS, &saved) == 0);
    CHECK(once.empty());
    CHECK(kept.find(
              "m: 1024 positions: 12 x 12 maps of 1024 x 1024 (kept, then written): needs 2.5 GB, more than the") == 0);
    CHECK(kept.find("left under ulimit -v (") != std::string::npos);
    CHECK(room.limit.rfind("ulimit -v (", 0) == 0);
    CHECK(room.bytes < 2.1e9);
}
