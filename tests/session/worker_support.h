#pragma once
// Driving the worker from a test: submit, then wait (bounded) for its answer.

#include "session/worker.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

namespace headscope::test {

// Waits (bounded) until the worker has answered `generation`.
inline bool wait_for(const session::Worker& worker, std::uint64_t generation) {
    for (int i = 0; i < 1000; ++i) {
        if (worker.answered() >= generation && !worker.busy()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Submits `r` and returns its result, once the worker has answered it.
inline std::shared_ptr<const session::Snapshot> result_of(session::Worker& worker, const session::Request& r) {
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    REQUIRE(worker.latest());
    REQUIRE(worker.latest()->generation == g);
    return worker.latest();
}

}   // namespace headscope::test
