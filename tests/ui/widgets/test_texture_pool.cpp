// The texture pool (ui/widgets/texture_pool.h): how much of a frame it may spend rebuilding (what
// the previous frame's drawing left of the 20 ms goal, and at least 1 ms), and when it
// builds, defers and uploads, counted on a stand-in texture so that no display is needed.
#include "ui/widgets/texture_pool.h"

#include <doctest/doctest.h>

#include <functional>
#include <future>
#include <thread>

using namespace std::chrono_literals;
using headscope::RgbaImage;
using headscope::ui::MipLevels;
using headscope::ui::rebuild_budget;
using Duration = std::chrono::steady_clock::duration;

namespace {

// Records what was uploaded: how often, and the width of level 0 (each test's "version").
struct CountingTexture {
    int uploads = 0;
    int width = 0;
    void upload(const MipLevels& levels) {
        ++uploads;
        width = levels.front().width;
    }
    void upload(const RgbaImage& image) { upload(MipLevels{image}); }
    bool empty() const { return uploads == 0; }
};
using Pool = headscope::ui::BasicTexturePool<CountingTexture>;

MipLevels levels_of_width(int width) { return MipLevels{RgbaImage{width, 1, std::vector<std::uint8_t>(4 * width)}}; }

// Frames of get_in_background until the texture has `width` and the pool has caught up
// (a background job lands in the first frame after it finishes); false after 10 s.
bool frames_until_uploaded(Pool& pool, const std::string& key, const std::function<Pool::BackgroundJob()>& prepare,
                           int width) {
    for (int frame = 0; frame < 10000; ++frame) {
        pool.begin_frame(0ms);
        const CountingTexture& texture = pool.get_in_background(key, prepare);
        if (texture.width == width && pool.caught_up()) return true;
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

// Jobs that make levels of the current `version`'s width; the job of version `held`
// waits until release(), so a test can have a job outlast frames.
struct HeldJobs {
    explicit HeldJobs(int held_version) : held(held_version) {}
    int version = 1;
    int prepared = 0;
    int held;
    std::promise<void> released_promise;
    std::shared_future<void> released = released_promise.get_future().share();
    std::function<Pool::BackgroundJob()> prepare() {
        return [this]() -> Pool::BackgroundJob {
            ++prepared;
            return [width = version, wait = version == held, done = released] {
                if (wait) done.wait();
                return levels_of_width(width);
            };
        };
    }
    void release() { released_promise.set_value(); }
};

}   // namespace

TEST_CASE("the rebuild budget is what drawing leaves of a 20 ms frame") {
    // Software rendering: ~13 ms of drawing leaves 7 ms.
    CHECK(rebuild_budget(13ms) == Duration(7ms));
    // A GPU draws in a few ms.
    CHECK(rebuild_budget(4ms) == Duration(16ms));
    CHECK(rebuild_budget(2500us) == Duration(17500us));
    // The first frame (nothing drawn before it): the whole goal.
    CHECK(rebuild_budget(0ms) == Duration(20ms));
}

TEST_CASE("the rebuild budget never falls below its floor") {
    // Drawing alone at or over the goal: still one texture a frame, so stale ones catch up.
    CHECK(rebuild_budget(19500us) == Duration(1ms));
    CHECK(rebuild_budget(20ms) == Duration(1ms));
    CHECK(rebuild_budget(40ms) == Duration(1ms));
}

TEST_CASE("a background map's job (and the copies it owns) is prepared only when a rebuild starts, not every frame") {
    Pool pool;
    int prepared = 0;
    int version = 1;
    const auto prepare = [&]() -> Pool::BackgroundJob {
        ++prepared;
        return [width = version] { return levels_of_width(width); };
    };
    // Never built: built at once, in this call.
    pool.begin_frame(0ms);
    CHECK(pool.get_in_background("w", prepare).width == 1);
    CHECK(prepared == 1);
    // Unchanged frames neither prepare nor upload.
    for (int frame = 0; frame < 100; ++frame) {
        pool.begin_frame(5ms);
        CHECK(pool.get_in_background("w", prepare).uploads == 1);
    }
    CHECK(prepared == 1);
    // A new result: one job, its copies made once, the old picture drawn until it lands.
    version = 2;
    pool.invalidate();
    pool.begin_frame(0ms);
    CHECK(pool.get_in_background("w", prepare).width == 1);
    CHECK_FALSE(pool.caught_up());
    REQUIRE(frames_until_uploaded(pool, "w", prepare, 2));
    CHECK(prepared == 2);
    CHECK(pool.get_in_background("w", prepare).uploads == 2);
    for (int frame = 0; frame < 100; ++frame) {
        pool.begin_frame(5ms);
        pool.get_in_background("w", prepare);
    }
    CHECK(prepared == 2);
    CHECK(pool.caught_up());
}

TEST_CASE("a result that lands while its map is being rebuilt: the running job finishes, then one more starts") {
    Pool pool;
    // Version 2's job waits for the test, so version 3 arrives while it runs.
    HeldJobs jobs(2);
    const auto prepare = jobs.prepare();
    pool.begin_frame(0ms);
    pool.get_in_background("w", prepare);
    jobs.version = 2;
    pool.invalidate();
    pool.begin_frame(0ms);
    pool.get_in_background("w", prepare);
    CHECK(jobs.prepared == 2);
    jobs.version = 3;
    pool.invalidate();
    for (int frame = 0; frame < 20; ++frame) {
        pool.begin_frame(0ms);
        CHECK(pool.get_in_background("w", prepare).width == 1);
        CHECK_FALSE(pool.caught_up());
    }
    CHECK(jobs.prepared == 2);   // no second job beside the running one
    jobs.release();
    REQUIRE(frames_until_uploaded(pool, "w", prepare, 3));
    CHECK(jobs.prepared == 3);
    // Version 2 was uploaded when it landed, then version 3.
    CHECK(pool.get_in_background("w", prepare).uploads == 3);
}

TEST_CASE("a new result's first frame waits for its map's job and draws it, and a job past the wait is drawn later") {
    Pool pool;
    // Version 3's job waits for the test: longer than any frame may wait.
    HeldJobs jobs(3);
    const auto prepare = jobs.prepare();
    pool.begin_frame(0ms);
    pool.get_in_background("w", prepare);
    // Allowed to wait: the job started in this frame is drawn in this frame.
    jobs.version = 2;
    pool.invalidate();
    pool.begin_frame(0ms);
    pool.wait_for_results(10s);
    CHECK(pool.get_in_background("w", prepare).width == 2);
    CHECK(pool.caught_up());
    // Not allowed (an ordinary frame): the old picture until the job lands.
    jobs.version = 4;
    pool.invalidate();
    pool.begin_frame(0ms);
    const CountingTexture& drawn = pool.get_in_background("w", prepare);
    CHECK((drawn.width == 2 && !pool.caught_up()));
    REQUIRE(frames_until_uploaded(pool, "w", prepare, 4));
    // An allowance left unspent (nothing was stale) ends with its frame: the next frame,
    // with a job that never ends until released, does not wait for it.
    pool.begin_frame(0ms);
    pool.wait_for_results(10s);
    CHECK(pool.get_in_background("w", prepare).width == 4);
    jobs.version = 3;
    pool.invalidate();
    pool.begin_frame(0ms);
    auto start = std::chrono::steady_clock::now();
    CHECK(pool.get_in_background("w", prepare).width == 4);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    // A job that outlasts the wait: the frame gives up after it and draws the old picture.
    pool.begin_frame(0ms);
    pool.wait_for_results(20ms);
    start = std::chrono::steady_clock::now();
    CHECK(pool.get_in_background("w", prepare).width == 4);
    CHECK(std::chrono::steady_clock::now() - start >= 20ms);
    CHECK_FALSE(pool.caught_up());
    jobs.release();
    REQUIRE(frames_until_uploaded(pool, "w", prepare, 3));
}

TEST_CASE("stale maps beyond the frame's budget are drawn as they were, and rebuilt in later frames") {
    Pool pool;
    int built = 0;
    const std::function<MipLevels()> slow = [&] {
        ++built;
        std::this_thread::sleep_for(2ms);
        return levels_of_width(built);
    };
    pool.begin_frame(0ms);
    for (const char* key : {"a", "b", "c"}) pool.get(key, slow);
    CHECK(built == 3);   // never built: built whatever the budget
    pool.invalidate();
    // The previous frame drew for 40 ms: the floor, 1 ms, is left; one 2 ms rebuild spends it.
    pool.begin_frame(40ms);
    for (const char* key : {"a", "b", "c"}) pool.get(key, slow);
    CHECK(built == 4);
    CHECK_FALSE(pool.caught_up());
    // A quick frame leaves 20 ms: the other two catch up.
    pool.begin_frame(0ms);
    for (const char* key : {"a", "b", "c"}) CHECK(pool.get(key, slow).uploads == 2);
    CHECK(built == 6);
    CHECK(pool.caught_up());
}
