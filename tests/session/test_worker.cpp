// The worker thread (session/worker.h): requests, loads with progress and cancel, errors,
// resume and prefix reuse, through a loader the tests drive where a test needs one.

#include "core/base/error.h"
#include "core/models/assets.h"
#include "core/models/model_registry.h"
#include "core/models/toy/toy_models.h"
#include "session/app_state.h"
#include "session/background_job.h"
#include "session/predictions.h"
#include "session/recent.h"
#include "session/worker.h"
#include "session/worker_support.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <thread>

using namespace headscope;
using namespace headscope::session;
using headscope::test::result_of;
using headscope::test::wait_for;

TEST_CASE("worker: computes off the caller's thread, reports errors, and the newest request wins") {
    Worker worker;
    Request r;
    r.input.text = "one two three";
    const auto first = worker.submit(r);
    REQUIRE(wait_for(worker, first));
    auto snapshot = worker.latest();
    REQUIRE(snapshot);
    CHECK(snapshot->generation == first);
    CHECK(snapshot->input.labels.size() == 3);
    CHECK(snapshot->trace.layers.size() == 2);

    r.input.text = "";   // an empty sentence: an error, and the last good result stays
    const auto bad = worker.submit(r);
    REQUIRE(wait_for(worker, bad));
    CHECK(worker.latest()->generation == first);
    CHECK(worker.latest_error().first == bad);
    CHECK(worker.latest_error().second.find("empty") != std::string::npos);

    // A burst of requests: the last one is what ends up shown.
    std::uint64_t last = 0;
    for (int i = 1; i <= 20; ++i) {
        r.input.text = "word " + std::to_string(i);
        r.causal = i % 2 == 0;
        last = worker.submit(r);
    }
    REQUIRE(wait_for(worker, last));
    CHECK(worker.latest()->generation == last);
    CHECK(worker.latest()->input.labels.back() == "20");
    CHECK(worker.latest_error().second.empty());

    r.variants = {{.name = "flipped", .flip_causal = true}};
    const auto flipped = worker.submit(r);
    REQUIRE(wait_for(worker, flipped));
    const VariantRun* run = worker.latest()->variant("flipped");
    REQUIRE(run != nullptr);
    REQUIRE(run->trace.has_value());
    CHECK(run->error.empty());
    CHECK_FALSE(run->input.has_value());   // the main input
    CHECK(worker.latest()->trace.mask.has_value() != run->trace->mask.has_value());
}

TEST_CASE("worker: an image checkpoint at its own resolution shows the picture it saw, on its own grid") {
    const std::string root = std::string(HEADSCOPE_GOLDEN_DIR) + "/..";
    AppState s;
    s.model.name = root + "/checkpoints/vit_tiny";   // 32 px, 8 px patches
    s.image_path = root + "/images/rgb.png";         // 64 x 48 px
    Worker worker;
    const auto sized = worker.submit(make_request(s));
    REQUIRE(wait_for(worker, sized));
    REQUIRE(worker.latest());
    CHECK(worker.latest()->image.width == 32);
    CHECK(worker.latest()->input.grid_width == 4);

    s.own_resolution = true;
    CHECK(make_request(s).input.image_options.own_resolution);
    const auto own = worker.submit(make_request(s));
    REQUIRE(wait_for(worker, own));
    INFO(worker.latest_error().second);
    REQUIRE(worker.latest()->generation == own);
    const Snapshot& snapshot = *worker.latest();
    CHECK(snapshot.image.width == 64);
    CHECK(snapshot.image.height == 48);
    CHECK(snapshot.input.grid_width == 8);
    CHECK(snapshot.input.grid_height == 6);
    CHECK(snapshot.trace.layers[0].heads[0].weights.rows() == 1 + 8 * 6);
}

TEST_CASE("worker: the custom mask reaches the model, ANDed with the causal mask") {
    Worker worker;
    Request r;
    r.input.text = "a b c";
    r.forbidden = {{2, 0}, {9, 9}};   // (9, 9) is past T = 3: ignored
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    const auto snapshot = worker.latest();
    REQUIRE(snapshot->trace.mask.has_value());
    CHECK_FALSE((*snapshot->trace.mask)(2, 0));
    CHECK((*snapshot->trace.mask)(0, 2));
    for (const HeadTrace& head : snapshot->trace.layers[0].heads) CHECK(head.weights(2, 0) == 0.0f);
    r.causal = true;
    const auto g2 = worker.submit(r);
    REQUIRE(wait_for(worker, g2));
    CHECK_FALSE((*worker.latest()->trace.mask)(0, 2));   // causal
    CHECK_FALSE((*worker.latest()->trace.mask)(2, 0));   // custom
    CHECK((*worker.latest()->trace.mask)(2, 1));
}

// ---------------------------------------------------------------------------------
// Opening models: loads with progress, cancel and failure, through a loader the tests
// drive, and a fake model that counts its forward passes.

namespace {

// Text in, one position per character; logits [T, 3]: column 0 counts the enabled heads
// of layer 0, column 1 is 0, column 2 the position. "fake:late-fail" is a causal model
// that says its head is big (its rows are then left for after the maps) and fails to
// compute them.
class FakeModel final : public Model {
public:
    FakeModel(std::string name, bool causal, std::shared_ptr<std::atomic<int>> forwards)
        : forwards_(std::move(forwards)) {
        info_.name = std::move(name);
        info_.n_layers = 1;
        info_.n_heads = 2;
        info_.width = 2;
        info_.takes_text = true;
        info_.causal = causal;
        if (info_.name == "fake:late-fail") {
            info_.causal = true;
            // A head's rows worth leaving for after the maps (ModelSession's head_work); its
            // logits still have 3 columns.
            info_.n_outputs = 100000;
            info_.width = 100;
        }
    }
    const ModelInfo& info() const override { return info_; }
    ModelInput encode_text(std::string_view text) const override {
        if (text.empty()) throw Error("the sentence is empty");
        ModelInput input;
        input.embeddings = Matrix::Zero(static_cast<Eigen::Index>(text.size()), 2);
        for (const char c : text) input.labels.emplace_back(1, c);
        return input;
    }
    ModelTrace forward(const ModelInput& input, const RunOptions& options) const override {
        ++*forwards_;
        const Eigen::Index T = input.embeddings.rows();
        if (input.labels.front() == "~") {
            // A long run: reports layer 0 of 1 until the worker stops it (bounded at 30 s).
            for (int i = 0; i < 6000 && options.on_layer; ++i) {
                options.on_layer(0, 1);
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        }
        ModelTrace trace;
        AttentionTrace layer;
        for (int h = 0; h < 2; ++h) {
            HeadTrace head;
            head.weights = Matrix::Identity(T, T);
            layer.heads.push_back(std::move(head));
        }
        trace.layers.push_back(layer);
        if (options.causal.value_or(info_.causal)) trace.mask = mask_causal(T, T);
        int enabled = 2;
        for (Eigen::Index h = 0; h < 2; ++h) enabled -= options.disabled_heads.off(0, h) ? 1 : 0;
        Matrix logits = Matrix::Zero(T, 3);
        for (Eigen::Index t = 0; t < T; ++t) {
            logits(t, 0) = static_cast<float>(enabled);
            logits(t, 2) = static_cast<float>(t);
        }
        trace.logits = std::move(logits);
        if (info_.n_outputs > 0) {
            trace.hidden = Matrix::Zero(T, 2);
            const Eigen::Index kept = options.last_logit_rows < 0 ? T : std::min(options.last_logit_rows, T);
            trace.logits = Matrix(trace.logits.get().bottomRows(kept));
        }
        return trace;
    }
    Matrix logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const override {
        if (info_.name == "fake:late-fail") throw Error(info_.name + ": the head's rows failed");
        return Model::logits_rows(trace, first, n);
    }
    std::string output_label(Eigen::Index index) const override { return "out" + std::to_string(index); }
    std::vector<OwnedTensor> export_weights() const override { return {}; }

private:
    ModelInfo info_;
    std::shared_ptr<std::atomic<int>> forwards_;
};

// A loader for "fake:NAME" models, driven by the test without timers: "fake:slow"
// reports 25%, says it started, and waits until the worker tells it to stop (it never
// finishes otherwise); "fake:gated" reports 25%, says it started, and finishes when the
// test says so; "fake:bad" fails. Every load is counted by name.
struct FakeLoader {
    std::shared_ptr<std::atomic<int>> forwards = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::map<std::string, int>> loads = std::make_shared<std::map<std::string, int>>();
    std::shared_ptr<std::promise<void>> started = std::make_shared<std::promise<void>>();
    std::shared_ptr<std::promise<void>> go_on = std::make_shared<std::promise<void>>();
    std::shared_ptr<std::atomic<bool>> saw_cancel = std::make_shared<std::atomic<bool>>(false);

    ModelLoader loader() const {
        return [*this](const ModelChoice& choice, const LoadControl& control) -> std::unique_ptr<Model> {
            ++(*loads)[choice.name];   // the worker's thread only
            if (choice.name == "fake:bad") throw Error(choice.name + "/config.json: no such file");
            if (choice.name == "fake:slow" || choice.name == "fake:gated") {
                control.report(0.25);
                started->set_value();
                if (choice.name == "fake:slow") {
                    control.cancel->wait(false);   // woken by the worker's notify when it asks to stop
                } else {
                    // Bounded only so a failing test cannot hang the run.
                    (void)go_on->get_future().wait_for(std::chrono::seconds(30));
                }
                try {
                    control.report(1.0);
                } catch (const LoadCancelled&) {
                    saw_cancel->store(true);
                    throw;
                }
            }
            return std::make_unique<FakeModel>(choice.name, choice.name == "fake:causal", forwards);
        };
    }
    bool wait_started() const {
        return started->get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    }
};

Request fake_request(const std::string& model, const std::string& text) {
    Request r;
    r.model.name = model;
    r.input.text = text;
    return r;
}

}   // namespace

TEST_CASE("worker: a load shows its progress, and Cancel stops it keeping the previous model and its result") {
    FakeLoader fake;
    Worker worker(fake.loader());
    const auto first = worker.submit(fake_request("fake:a", "abc"));
    REQUIRE(wait_for(worker, first));
    const auto before = worker.latest();
    REQUIRE(before);
    CHECK(before->model.name == "fake:a");
    CHECK_FALSE(worker.loading().has_value());

    const auto slow = worker.submit(fake_request("fake:slow", "abc"));
    REQUIRE(fake.wait_started());
    const auto progress = worker.loading();
    REQUIRE(progress.has_value());
    CHECK(progress->name == "fake:slow");
    CHECK(progress->fraction == 0.25);
    CHECK(worker.busy());
    CHECK(worker.model_in_use()->name == "fake:a");   // not let go while the new one loads

    worker.cancel_load();
    REQUIRE(wait_for(worker, slow));
    CHECK(fake.saw_cancel->load());
    const Answer answer = worker.latest_answer();
    CHECK(answer.generation == slow);
    CHECK(answer.failure == Failure::load_cancelled);
    CHECK(answer.model.name == "fake:slow");
    CHECK_FALSE(worker.loading().has_value());
    CHECK(worker.latest() == before);   // the views keep the previous result
    CHECK(worker.model_in_use()->name == "fake:a");

    // Back on the previous model: no second load of it.
    const auto again = worker.submit(fake_request("fake:a", "abcd"));
    REQUIRE(wait_for(worker, again));
    CHECK(worker.latest()->input.labels.size() == 4);
    CHECK((*fake.loads)["fake:a"] == 1);
    worker.cancel_load();   // nothing loading: no effect on what follows
    const auto after = worker.submit(fake_request("fake:a", "ab"));
    REQUIRE(wait_for(worker, after));
    CHECK(worker.latest_answer().failure == Failure::none);
}

TEST_CASE("worker: a long computation shows layer k of L, and Cancel or a newer request stops it") {
    FakeLoader fake;
    Worker worker(fake.loader());
    const auto first = worker.submit(fake_request("fake:a", "abc"));
    REQUIRE(wait_for(worker, first));
    const auto before = worker.latest();
    CHECK_FALSE(worker.computing().has_value());

    // The computation in progress, once the worker has started one and the run has said
    // how many layers it has (bounded at 30 s): until its first report the worker holds an
    // empty progress (0 layers), which a slow machine lets a test see.
    const auto computing = [&] {
        std::optional<ComputeProgress> progress = worker.computing();
        for (int i = 0; i < 3000 && !(progress && progress->n_layers > 0); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            progress = worker.computing();
        }
        return progress;
    };
    const auto slow = worker.submit(fake_request("fake:a", "~long"));
    const std::optional<ComputeProgress> progress = computing();
    REQUIRE(progress.has_value());
    CHECK(progress->n_layers == 1);
    CHECK(progress->run.empty());   // the main run, not the intact or flipped one
    worker.cancel_compute();
    REQUIRE(wait_for(worker, slow));
    CHECK(worker.latest_answer().failure == Failure::compute_cancelled);
    CHECK(worker.latest() == before);   // the views keep the last result
    CHECK_FALSE(worker.computing().has_value());

    // A newer request stops the one computing: only the newest is wanted.
    const auto stale = worker.submit(fake_request("fake:a", "~again"));
    REQUIRE(computing().has_value());
    const auto newest = worker.submit(fake_request("fake:a", "xyz"));
    REQUIRE(wait_for(worker, newest));
    CHECK(worker.answered() == newest);
    CHECK(stale < newest);
    CHECK(worker.latest()->input.labels.size() == 3);
    CHECK(worker.latest_answer().failure == Failure::none);
}

namespace {

// The maps of `generation` once the worker put them up before their numbers (bounded at 30 s).
std::shared_ptr<const Snapshot> maps_of(const Worker& worker, std::uint64_t generation) {
    for (int i = 0; i < 3000; ++i) {
        const std::shared_ptr<const Snapshot> latest = worker.latest();
        if (latest && latest->generation == generation) return latest;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return nullptr;
}

// 1 layer x 2 heads at T = 4,000: the heads' metrics are work enough for the maps to come
// first (ComputeControl::maps_first_above).
Request long_fake_request(std::size_t length) { return fake_request("fake:a", std::string(length, 'a')); }

}   // namespace

TEST_CASE("worker: a long run's numbers wait for the window to draw its maps, then follow") {
    FakeLoader fake;
    // A wait with no limit a test could reach: the numbers come only once the window says so.
    Worker worker(fake.loader(), std::chrono::minutes(10));
    REQUIRE(wait_for(worker, worker.submit(fake_request("fake:a", "abc"))));   // generation 1
    const auto generation = worker.submit(long_fake_request(4000));
    const std::shared_ptr<const Snapshot> maps = maps_of(worker, generation);
    REQUIRE(maps);
    REQUIRE(maps->numbers_pending);
    // Not drawn: the numbers (a few ms of metrics here) do not come.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(worker.latest() == maps);
    CHECK(worker.busy());
    // An older generation's word is not this one's.
    REQUIRE(generation > 1);
    worker.maps_on_screen(generation - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(worker.latest() == maps);
    worker.maps_on_screen(generation);
    REQUIRE(wait_for(worker, generation));
    const auto whole = worker.latest();
    CHECK_FALSE(whole->numbers_pending);
    CHECK(whole->metrics.size() == 2);
    CHECK(whole->generation == generation);

    // A newer request ends the wait: the one waiting is stopped, the newer one answered.
    const auto waiting = worker.submit(long_fake_request(4001));
    const auto waiting_maps = maps_of(worker, waiting);
    REQUIRE(waiting_maps);
    REQUIRE(waiting_maps->numbers_pending);
    const auto newer = worker.submit(fake_request("fake:a", "abc"));
    REQUIRE(wait_for(worker, newer));
    CHECK(worker.latest()->generation == newer);
    CHECK(worker.latest_answer().failure == Failure::none);

    // So does a Cancel: the run waiting is answered (its numbers stop where they next look
    // at the Cancel; this model's have no such place, and finish) with no word from the
    // window, which would otherwise take the ten minutes above.
    const auto cancelled = worker.submit(long_fake_request(4002));
    const auto cancelled_maps = maps_of(worker, cancelled);
    REQUIRE(cancelled_maps);
    REQUIRE(cancelled_maps->numbers_pending);
    worker.cancel_compute();
    REQUIRE(wait_for(worker, cancelled));
    CHECK(worker.answered() == cancelled);
}

TEST_CASE("worker: a run that fails after its maps went up keeps them on screen, no longer waiting, with its error") {
    FakeLoader fake;
    Worker worker(fake.loader(), std::chrono::milliseconds(50));
    const auto generation = worker.submit(fake_request("fake:late-fail", std::string(300, 'a')));
    const std::shared_ptr<const Snapshot> maps = maps_of(worker, generation);
    REQUIRE(maps);
    CHECK(maps->numbers_pending);
    CHECK(maps->trace.logits.rows() == 1);   // the last row came with the maps
    REQUIRE(wait_for(worker, generation));
    const Answer answer = worker.latest_answer();
    CHECK(answer.generation == generation);
    CHECK(answer.failure == Failure::compute);
    CHECK(answer.error == "fake:late-fail: the head's rows failed");
    const auto kept = worker.latest();
    REQUIRE(kept);
    CHECK(kept->generation == generation);
    CHECK_FALSE(kept->numbers_pending);   // the window stops saying "measuring..."
    CHECK(kept->trace.layers.shares(0, maps->trace.layers));
    CHECK_FALSE(worker.busy());
}

TEST_CASE("worker: with no window to draw them, a long run's numbers come all the same, after the wait's limit") {
    FakeLoader fake;
    Worker worker(fake.loader());
    const auto generation = worker.submit(long_fake_request(4000));
    REQUIRE(wait_for(worker, generation));
    CHECK_FALSE(worker.latest()->numbers_pending);
    CHECK(worker.latest()->metrics.size() == 2);
}

namespace {

// What the worker asked of the heap (Worker::MemoryReserve): each call's bytes, and whether
// it saw a stop. `hold` makes the next call wait for its stop (a request coming in).
struct ReserveLog {
    std::mutex mutex;
    std::vector<std::size_t> asked;
    std::vector<bool> stopped;
    std::atomic<bool> hold = false;

    std::vector<std::size_t> calls() {
        std::lock_guard lock(mutex);
        return asked;
    }
    bool stopped_at(std::size_t n) {
        std::lock_guard lock(mutex);
        return stopped.at(n);
    }
    // Waits (bounded: 30 s, as the other waits here) until `n` calls have ended.
    bool wait_calls(std::size_t n) {
        for (int i = 0; i < 3000; ++i) {
            {
                std::lock_guard lock(mutex);
                if (stopped.size() >= n) return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    static Worker::MemoryReserve of(std::shared_ptr<ReserveLog> log) {
        return [log](std::size_t bytes, const std::function<bool()>& stop) -> std::size_t {
            {
                std::lock_guard lock(log->mutex);
                log->asked.push_back(bytes);
            }
            bool saw_stop = stop();
            if (log->hold.exchange(false)) {
                for (int i = 0; !saw_stop && i < 3000; ++i) {   // bounded: a failing test cannot hang
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    saw_stop = stop();
                }
            }
            std::lock_guard lock(log->mutex);
            log->stopped.push_back(saw_stop);
            return 0;
        };
    }
};

}   // namespace

TEST_CASE("worker: resting after a big result, it tops the heap up for the next run once, and a request stops it") {
    FakeLoader fake;
    const auto log = std::make_shared<ReserveLog>();
    Worker worker(fake.loader(), Worker::default_maps_wait, ReserveLog::of(log));
    const auto rest = Worker::reserve_after + std::chrono::milliseconds(300);
    // A small result (a few KB): its run's memory faults in quickly, nothing asked.
    REQUIRE(wait_for(worker, worker.submit(fake_request("fake:a", "abc"))));
    std::this_thread::sleep_for(rest);
    CHECK(log->calls().empty());
    // 2 maps of 4,000 x 4,000 (128 MB): once the worker has rested, the heap is asked to
    // hold that much free, the size of the result shown.
    REQUIRE(wait_for(worker, worker.submit(long_fake_request(4000))));
    REQUIRE(log->wait_calls(1));
    const std::size_t big = static_cast<std::size_t>(worker.latest()->kept_bytes());
    CHECK(big >= Worker::least_reserve);
    CHECK(log->calls() == std::vector<std::size_t>{big});
    // As big again: the run it replaces frees what the next needs; nothing asked.
    REQUIRE(wait_for(worker, worker.submit(long_fake_request(4001))));
    std::this_thread::sleep_for(rest);
    CHECK(log->calls().size() == 1);
    // An eighth bigger or more: asked again. A request coming in meanwhile stops it...
    log->hold = true;
    REQUIRE(wait_for(worker, worker.submit(long_fake_request(4500))));
    const std::size_t bigger = static_cast<std::size_t>(worker.latest()->kept_bytes());
    for (int i = 0; i < 3000 && log->calls().size() < 2; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(log->calls().size() == 2);
    CHECK(log->calls().back() == bigger);
    const auto interrupting = worker.submit(long_fake_request(4500));
    REQUIRE(log->wait_calls(2));
    CHECK(log->stopped_at(1));
    REQUIRE(wait_for(worker, interrupting));
    CHECK(worker.latest()->generation == interrupting);
    // ... and, not done, it is asked again after the next result.
    REQUIRE(log->wait_calls(3));
    CHECK(log->calls().back() == static_cast<std::size_t>(worker.latest()->kept_bytes()));
    CHECK_FALSE(log->stopped_at(2));
}

TEST_CASE("worker: a request for another model stops a load in progress (the newest request wins)") {
    FakeLoader fake;
    Worker worker(fake.loader());
    worker.submit(fake_request("fake:slow", "abc"));
    REQUIRE(fake.wait_started());
    // The same model with other text does not stop it...
    const auto gen_text = worker.submit(fake_request("fake:slow", "abcd"));
    CHECK(worker.loading().has_value());
    // ...another model does.
    const auto other = worker.submit(fake_request("fake:b", "xy"));
    CHECK(other > gen_text);
    REQUIRE(wait_for(worker, other));
    CHECK(fake.saw_cancel->load());
    REQUIRE(worker.latest());
    CHECK(worker.latest()->model.name == "fake:b");
    CHECK(worker.latest()->generation == other);
    CHECK(worker.model_in_use()->name == "fake:b");
}

TEST_CASE("worker: a load that finishes replaces the model, one that fails keeps the previous one") {
    FakeLoader fake;
    Worker worker(fake.loader());
    const auto first = worker.submit(fake_request("fake:a", "abc"));
    REQUIRE(wait_for(worker, first));

    const auto gated = worker.submit(fake_request("fake:gated", "abc"));
    REQUIRE(fake.wait_started());
    CHECK(worker.loading()->fraction == 0.25);
    fake.go_on->set_value();
    REQUIRE(wait_for(worker, gated));
    CHECK_FALSE(fake.saw_cancel->load());
    CHECK(worker.latest()->model.name == "fake:gated");
    CHECK(worker.latest()->info.name == "fake:gated");
    CHECK(worker.model_in_use()->name == "fake:gated");

    const auto shown = worker.latest();
    const auto bad = worker.submit(fake_request("fake:bad", "abc"));
    REQUIRE(wait_for(worker, bad));
    const Answer answer = worker.latest_answer();
    CHECK(answer.failure == Failure::load);
    CHECK(answer.error == "fake:bad/config.json: no such file");
    CHECK(answer.model.name == "fake:bad");
    CHECK(worker.latest() == shown);
    CHECK(worker.model_in_use()->name == "fake:gated");
    // A compute error is told apart from a load error.
    const auto empty = worker.submit(fake_request("fake:gated", ""));
    REQUIRE(wait_for(worker, empty));
    CHECK(worker.latest_answer().failure == Failure::compute);
    CHECK((*fake.loads)["fake:gated"] == 1);
}

TEST_CASE("worker: what the loaded model is can be read before its first result (it failed here)") {
    FakeLoader fake;
    Worker worker(fake.loader());
    CHECK_FALSE(worker.model_in_use_info());
    const auto empty = worker.submit(fake_request("fake:a", ""));   // an empty sentence: no result
    REQUIRE(wait_for(worker, empty));
    CHECK(worker.latest_answer().failure == Failure::compute);
    CHECK_FALSE(worker.latest());
    REQUIRE(worker.model_in_use_info());
    CHECK(worker.model_in_use_info()->name == "fake:a");
}

TEST_CASE("worker: the causal mask defaults to the model's, and labels of the logit columns come along") {
    FakeLoader fake;
    Worker worker(fake.loader());
    Request r = fake_request("fake:causal", "abc");
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    const auto s1 = worker.latest();
    CHECK(s1->causal);
    CHECK(s1->trace.mask.has_value());
    REQUIRE(s1->output_labels);
    CHECK(*s1->output_labels == std::vector<std::string>{"out0", "out1", "out2"});
    r.causal = false;
    const auto g2 = worker.submit(r);
    REQUIRE(wait_for(worker, g2));
    CHECK_FALSE(worker.latest()->causal);
    CHECK_FALSE(worker.latest()->trace.mask.has_value());
    CHECK(worker.latest()->output_labels == s1->output_labels);   // one table per model
}

TEST_CASE(
    "worker: the intact logits are computed once per model, input and mask, not per ablation, nor after a plain run") {
    FakeLoader fake;
    Worker worker(fake.loader());
    Request r = fake_request("fake:a", "abc");
    auto run = [&] {
        const auto g = worker.submit(r);
        REQUIRE(wait_for(worker, g));
        return worker.latest();
    };
    const auto plain = run();
    CHECK(fake.forwards->load() == 1);
    CHECK_FALSE(plain->ablated);
    CHECK_FALSE(plain->intact_logits);

    r.disabled_heads = {{true, false}};
    const auto ablated = run();
    // The ablated run alone: the plain run before it, same input and mask, is the intact one.
    CHECK(fake.forwards->load() == 2);
    CHECK(ablated->intact.get() == &plain->trace);
    CHECK(ablated->ablated);
    REQUIRE(ablated->intact_logits);
    CHECK(ablated->trace.logits(0, 0) == 1.0f);       // one head left
    CHECK((*ablated->intact_logits)(0, 0) == 2.0f);   // both heads
    CHECK(ablated->intact_logits->rows() == 3);

    r.disabled_heads = {{false, true}};
    const auto other_head = run();
    CHECK(fake.forwards->load() == 3);   // cached: only the ablated run
    CHECK(other_head->intact_logits == ablated->intact_logits);

    r.input.text = "abcd";   // another input, after an ablated run: the intact run again
    const auto longer = run();
    CHECK(fake.forwards->load() == 5);
    CHECK(longer->intact_logits->rows() == 4);
    r.causal = true;   // another mask: again
    run();
    CHECK(fake.forwards->load() == 7);
    r.forbidden = {{1, 0}};
    run();
    CHECK(fake.forwards->load() == 9);

    r.disabled_heads = {{false, false}};   // nothing disabled: nothing to compare with
    const auto none = run();
    CHECK(fake.forwards->load() == 10);
    CHECK_FALSE(none->ablated);
    CHECK_FALSE(none->intact_logits);
}

TEST_CASE("worker: toggling a head resumes at its layer, and the result equals a run from scratch") {
    Worker worker;
    Request r;
    r.model.name = "builtin:toy-text";
    r.model.config.n_layers = 3;
    r.input.text = "the cat sat on the mat";
    const auto run = [&] { return result_of(worker, r); };
    const auto first = run();
    CHECK(first->resumed_at == 0);
    REQUIRE(first->metrics.size() == 12);
    r.disabled_heads = {{false, false, false, false}, {false, false, true, false}, {false, false, false, false}};
    const auto toggled = run();
    CHECK(toggled->resumed_at == 1);
    CHECK(toggled->input_key == first->input_key);   // the disabled heads are not part of it
    // The same as computing everything again.
    const auto model = make_toy_text(r.model.config);
    RunOptions options;
    options.disabled_heads = r.disabled_heads;
    const ModelTrace fresh = model->forward(toggled->input, options);
    CHECK((toggled->trace.hidden - fresh.hidden).cwiseAbs().maxCoeff() == 0.0f);
    CHECK((toggled->trace.layers[2].heads[0].weights - fresh.layers[2].heads[0].weights).cwiseAbs().maxCoeff() == 0.0f);
    // Metrics: layer 0's reused, layers 1.. recomputed, one per head in order.
    REQUIRE(toggled->metrics.size() == 12);
    for (std::size_t n = 0; n < 12; ++n) {
        CHECK(toggled->metrics[n].layer == static_cast<int>(n / 4));
        CHECK(toggled->metrics[n].head == static_cast<int>(n % 4));
    }
    CHECK(toggled->metrics[0].prev_token == first->metrics[0].prev_token);
    REQUIRE(toggled->effect.has_value());
    CHECK(toggled->effect->measure == EffectMeasure::relative_change);
    CHECK(toggled->effect->value > 0.0);
    // Another sentence is another input: computed from layer 0.
    r.input.text = "a dog ran";
    const auto other = run();
    CHECK(other->resumed_at == 0);
    CHECK(other->input_key != first->input_key);
}

TEST_CASE("worker: a resumed run shares the layers before its first with the run before, and a head switched back on "
          "is answered by the intact run held") {
    Worker worker;
    Request r;
    r.model.name = "builtin:tiny-story";
    r.input.text = "the cat sat on the mat";
    const auto run = [&] { return result_of(worker, r); };
    const auto intact = run();
    const Eigen::Index L = intact->info.n_layers;
    REQUIRE(L >= 2);
    REQUIRE(intact->trace.logits.size() != 0);
    r.disabled_heads = HeadMask(L, intact->info.n_heads);
    r.disabled_heads.set(1, 0);
    const auto off = run();
    CHECK(off->resumed_at == 1);
    CHECK(off->trace.layers.shares(0, intact->trace.layers));    // the very layer, not a copy
    CHECK(!off->trace.layers.shares(1, intact->trace.layers));   // computed again
    CHECK(off->intact == std::shared_ptr<const ModelTrace>(intact, &intact->trace));
    CHECK(off->trace.layer_inputs[0].shares(intact->trace.layer_inputs[0]));   // the stream into layer 0 too
    CHECK(!off->trace.logits.shares(intact->trace.logits));
    // The memory line counts a shared layer once.
    CHECK(trace_bytes(intact->trace, &off->trace) < trace_bytes(intact->trace));
    CHECK(off->kept_bytes() < trace_bytes(off->trace) + trace_bytes(intact->trace));
    // On again: nothing computed, the intact run's layers, logits and metrics shown.
    r.disabled_heads = {};
    const auto on = run();
    CHECK(on->resumed_at == L);
    CHECK(!on->ablated);
    CHECK(!on->effect.has_value());
    for (std::size_t l = 0; l < static_cast<std::size_t>(L); ++l)
        CHECK(on->trace.layers.shares(l, intact->trace.layers));
    CHECK(on->trace.logits.shares(intact->trace.logits));   // shared, not copied
    REQUIRE(on->trace.layer_inputs.size() == static_cast<std::size_t>(L));
    CHECK(on->trace.layer_inputs[0].shares(intact->trace.layer_inputs[0]));
    REQUIRE(on->metrics.size() == intact->metrics.size());
    for (std::size_t n = 0; n < on->metrics.size(); ++n) CHECK(on->metrics[n].entropy == intact->metrics[n].entropy);
    // ... equal to a run from scratch.
    const auto model = open_model(r.model.name, ToyConfig{});
    const ModelTrace fresh = model->forward(on->input, RunOptions{});
    CHECK((on->trace.logits.get() - fresh.logits.get()).cwiseAbs().maxCoeff() < 1e-5f);
    // Off and on again, with the Stages view on another layer: that run kept another
    // layer's stages, so it is computed (from the lower of the two layers), not held.
    r.disabled_heads = off->options.disabled_heads;
    (void)run();
    r.disabled_heads = {};
    r.stages_layer = 0;
    const auto staged = run();
    CHECK(staged->resumed_at == 0);
    CHECK(detail_of(staged->trace.layers[0]) == TraceDetail::all_stages);
    // Off and on again with the causal mask flipped: another input key, computed whole.
    r.stages_layer.reset();
    r.disabled_heads = off->options.disabled_heads;
    (void)run();
    r.disabled_heads = {};
    r.causal = false;
    const auto flipped = run();
    CHECK(flipped->resumed_at == 0);
    CHECK(!flipped->causal);
}

TEST_CASE("worker: wakes the window's loop once per answered request, results and errors alike") {
    Worker worker;
    std::atomic<int> wakes{0};
    worker.set_on_answer([&] { ++wakes; });
    Request r;
    r.model.name = "builtin:toy-text";
    r.input.text = "the cat sat";
    const auto first = result_of(worker, r);
    r.input.text = "";   // an error is an answer too
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    CHECK_FALSE(worker.latest_error().second.empty());
    // The call comes after the answer is readable: allow it the moment to land.
    for (int i = 0; i < 200 && wakes.load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(wakes.load() == 2);
}

TEST_CASE("worker: a run keeps the stages of the layer the Stages view shows only, another layer resumes from the "
          "lower one") {
    Worker worker;
    Request r;
    r.model.name = "builtin:toy-text";
    r.input.text = "the cat sat on the mat";
    const auto run = [&] { return result_of(worker, r); };
    const auto none = run();
    for (const AttentionTrace& layer : none->trace.layers) CHECK(detail_of(layer) == TraceDetail::weights);
    const auto model = open_model(r.model.name, ToyConfig{});
    RunOptions all;
    all.detail = TraceDetail::all_stages;
    const ModelTrace fresh = model->forward(none->input, all);
    const Eigen::Index L = none->info.n_layers;
    REQUIRE(L >= 2);
    for (const int shown : {static_cast<int>(L) - 1, 0}) {
        r.stages_layer = shown;
        const auto staged = run();
        // From the lower of the layers whose stages were kept and are now.
        CHECK(staged->resumed_at == shown);
        for (Eigen::Index l = 0; l < L; ++l) {
            const AttentionTrace& layer = staged->trace.layers[static_cast<std::size_t>(l)];
            CHECK(detail_of(layer) == (l == shown ? TraceDetail::all_stages : TraceDetail::weights));
            for (std::size_t h = 0; h < layer.heads.size(); ++h) {
                const HeadTrace& expected = fresh.layers[static_cast<std::size_t>(l)].heads[h];
                CHECK((layer.heads[h].weights - expected.weights).cwiseAbs().maxCoeff() < 1e-6f);
                if (l == shown) {
                    CHECK((layer.heads[h].scores - expected.scores).cwiseAbs().maxCoeff() < 1e-5f);
                    CHECK((layer.heads[h].masked.array().isInf() == expected.masked.array().isInf()).all());
                    CHECK((layer.heads[h].v - expected.v).cwiseAbs().maxCoeff() < 1e-5f);
                    CHECK((layer.heads[h].context - expected.context).cwiseAbs().maxCoeff() < 1e-5f);
                }
            }
        }
    }
    // Another view: the maps only again.
    r.stages_layer.reset();
    const auto after = run();
    for (const AttentionTrace& layer : after->trace.layers) CHECK(detail_of(layer) == TraceDetail::weights);
}

TEST_CASE("worker: typing at the end of a GPT-2 text computes only the new positions, equal to a run from scratch") {
    Worker worker;
    Request r;
    r.model.name = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/gpt2_tiny";
    r.input.text = "the cat sat";
    r.stages_layer = 1;   // the Stages view is open on layer 1: its stages are joined too
    const auto run = [&] { return result_of(worker, r); };
    const auto first = run();
    CHECK(first->reused_positions == 0);
    r.input.text = "the cat sat on the mat";
    const auto typed = run();
    const auto T = typed->input.embeddings.rows();
    CHECK(typed->reused_positions > 0);
    CHECK(typed->reused_positions < T);
    const auto model = open_model(r.model.name, ToyConfig{});
    RunOptions options;
    options.detail = TraceDetail::all_stages;
    const ModelTrace fresh = model->forward(typed->input, options);
    CHECK((typed->trace.logits.get() - fresh.logits.get()).cwiseAbs().maxCoeff() < 1e-4f);
    for (std::size_t l = 0; l < fresh.layers.size(); ++l) {
        for (std::size_t h = 0; h < fresh.layers[l].heads.size(); ++h) {
            CHECK((typed->trace.layers[l].heads[h].weights - fresh.layers[l].heads[h].weights).cwiseAbs().maxCoeff() <
                  1e-6f);
            if (l == 1) {
                CHECK((typed->trace.layers[l].heads[h].scores - fresh.layers[l].heads[h].scores).cwiseAbs().maxCoeff() <
                      1e-5f);
                CHECK((typed->trace.layers[l].heads[h].q - fresh.layers[l].heads[h].q).cwiseAbs().maxCoeff() < 1e-5f);
            } else {
                CHECK(typed->trace.layers[l].heads[h].scores.size() == 0);   // maps only
            }
        }
    }
    REQUIRE(typed->metrics.size() == first->metrics.size());
    // Measured from the first run's totals over the kept rows (HeadMetricSums), the
    // metrics are what measuring every row of the typed run's maps gives, bit for bit.
    CHECK(first->metric_sums.size() == first->metrics.size());
    CHECK(typed->metric_sums.size() == typed->metrics.size());
    CHECK(typed->metrics == compute_model_metrics(typed->trace, metric_context(typed->input, typed->info)));
    // An edit in the middle changes an early position: nothing after it is reused.
    r.input.text = "a cat sat on the mat";
    const auto edited = run();
    CHECK(edited->reused_positions == 0);
}

TEST_CASE("worker: the box's token ids, ticked or from --tokens, are ids on a checkpoint with a tokenizer") {
    Worker worker;
    Request r;
    r.model.name = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/gpt2_tiny";   // vocab.json + merges.txt
    r.input.text = "187, 37,33";
    CHECK(result_of(worker, r)->input.ids.size() > 3);   // as text: digits, commas and spaces tokenized
    r.input.ids_typed = true;
    CHECK(result_of(worker, r)->input.ids == std::vector<std::int64_t>{187, 37, 33});
    r.input.text = "1,99999999999999999999";
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    CHECK(worker.latest_error().second ==
          "token ids: '99999999999999999999' is too large (at most 18 digits; expected e.g. 464,3797,3332)");
}

TEST_CASE("worker: token ids typed for a checkpoint without tokenizer files") {
    CHECK(token_ids_typed("464, 3797,3332 \n") == std::vector<std::int64_t>{464, 3797, 3332});
    CHECK(token_ids_typed(" 7 ") == std::vector<std::int64_t>{7});
    // What was typed is quoted as it was, spaces and all.
    CHECK_THROWS_WITH_AS(token_ids_typed("The cat, 4"),
                         "token ids: 'The cat' is not a non-negative whole number (expected e.g. 464,3797,3332)",
                         headscope::Error);
    CHECK_THROWS_AS(token_ids_typed("1,,2"), headscope::Error);
    CHECK_THROWS_AS(token_ids_typed("   "), headscope::Error);
}
