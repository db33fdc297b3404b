// Background jobs (session/background_job.h): results by key, cancel, forget.

#include "core/base/error.h"
#include "core/models/assets.h"
#include "core/models/model_registry.h"
#include "core/models/toy/toy_models.h"
#include "session/app_state.h"
#include "session/background_job.h"
#include "session/predictions.h"
#include "session/recent.h"
#include "session/worker.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <thread>

using namespace headscope;
using namespace headscope::session;

TEST_CASE("background jobs: results by key, a cancel sticks until restarted, forget drops a running job's result") {
    BackgroundJobs jobs;
    const auto wait_idle = [&] {
        for (int i = 0; i < 2000 && jobs.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        REQUIRE_FALSE(jobs.busy());
    };
    std::atomic<int> runs{0};
    const BackgroundJobs::Work answer = BackgroundJobs::job<int>([&](const LoadControl&) {
        ++runs;
        return std::make_shared<const int>(42);
    });
    jobs.start("a", answer);
    wait_idle();
    REQUIRE(jobs.result<int>("a"));
    CHECK(*jobs.result<int>("a") == 42);
    CHECK_FALSE(jobs.result<double>("a"));   // typed: an int is never read as another type
    jobs.start("a", answer);                 // kept: not run again
    wait_idle();
    CHECK(runs.load() == 1);
    jobs.restart("a", answer);   // Scan again
    wait_idle();
    CHECK(runs.load() == 2);

    // A slow job, cancelled: its key reports "cancelled" and start() leaves it so.
    const BackgroundJobs::Work slow = BackgroundJobs::job<int>([](const LoadControl& control) {
        for (int i = 0; i < 2000; ++i) {
            control.report(i / 2000.0);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return std::make_shared<const int>(7);
    });
    jobs.start("b", slow);
    for (int i = 0; i < 200 && !jobs.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    jobs.cancel();
    wait_idle();
    CHECK(jobs.error("b") == "cancelled");
    jobs.start("b", slow);
    CHECK_FALSE(jobs.busy());
    // forget_results(): a job still running then never lands.
    jobs.restart("b", slow);
    jobs.forget_results();
    wait_idle();
    CHECK_FALSE(jobs.result<int>("b"));
    CHECK_FALSE(jobs.result<int>("a"));
}
