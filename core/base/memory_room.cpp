#include "core/base/memory_room.h"

#include "core/base/error.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <tuple>

namespace headscope {

namespace {

// The machine's RAM kept for everything else (the desktop, the file cache).
constexpr double ram_share = 0.75;

std::optional<double> number_in(const std::string& path) {
    std::ifstream in(path);
    double value = 0;
    if (!(in >> value)) return std::nullopt;   // missing, or "max" (cgroup v2: no limit)
    return value;
}

// Fields 0 (address space) and 1 (resident) of /proc/self/statm, in bytes.
std::pair<double, double> own_memory() {
    std::ifstream in("/proc/self/statm");
    double size = 0, resident = 0;
    in >> size >> resident;
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    return {size * page, resident * page};
}

// The memory cgroup's limit and usage: v2 (the unified hierarchy) or v1.
std::optional<std::pair<double, double>> cgroup_memory() {
    std::ifstream groups("/proc/self/cgroup");
    std::string line, v2_path, v1_path;
    while (std::getline(groups, line)) {
        if (line.rfind("0::", 0) == 0) v2_path = line.substr(3);
        const auto memory = line.find(":memory:");
        if (memory != std::string::npos) v1_path = line.substr(memory + 8);
    }
    for (const auto& [base, limit_file, usage_file] :
         {std::tuple{"/sys/fs/cgroup" + v2_path, "/memory.max", "/memory.current"},
          std::tuple{"/sys/fs/cgroup/memory" + v1_path, "/memory.limit_in_bytes", "/memory.usage_in_bytes"},
          std::tuple{std::string("/sys/fs/cgroup/memory"), "/memory.limit_in_bytes", "/memory.usage_in_bytes"}}) {
        const auto limit = number_in(base + limit_file);
        // v1 writes "no limit" as a number near 2^63.
        if (!limit || *limit > 1e18) continue;
        return std::pair{*limit, number_in(base + usage_file).value_or(0.0)};
    }
    return std::nullopt;
}

}   // namespace

std::string gigabytes(double bytes) {
    char text[32];
    if (bytes >= 1e12) {
        std::snprintf(text, sizeof text, "%.1f TB", bytes / 1e12);
    } else {
        std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
    }
    return text;
}

MachineMemory machine_memory() {
    MachineMemory memory;
    memory.resident = own_memory().second;
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0) memory.ram = static_cast<double>(pages) * static_cast<double>(page_size);
    return memory;
}

MemoryRoom memory_room() {
    MemoryRoom room{std::numeric_limits<double>::infinity(), "no limit"};
    const auto [mapped, resident] = own_memory();
    const auto consider = [&](double left, const std::string& limit) {
        if (left < room.bytes) room = {left < 0 ? 0 : left, limit};
    };
    if (const double ram = machine_memory().ram; ram > 0) {
        consider(ram_share * ram - resident, "3/4 of this machine's " + gigabytes(ram) + " of RAM");
    }
    rlimit address_space{};
    if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
        const double limit = static_cast<double>(address_space.rlim_cur);
        consider(limit - mapped, "ulimit -v (" + gigabytes(limit) + ")");
    }
    if (const auto group = cgroup_memory()) {
        consider(group->first - group->second, "the memory cgroup's limit (" + gigabytes(group->first) + ")");
    }
    return room;
}

void check_memory_room(double bytes, const std::string& what, const std::string& advice) {
    const MemoryRoom room = memory_room();
    if (bytes <= room.bytes) return;
    throw Error(what + ": needs " + gigabytes(bytes) + ", more than the " + gigabytes(room.bytes) + " left under " +
                room.limit + "; " + advice);
}

}   // namespace headscope
