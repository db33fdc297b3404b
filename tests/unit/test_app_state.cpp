// The window's state transitions and its worker thread, without a window; opening
// models (progress, cancel, failure) through a loader the tests drive; the predictions
// panel's rows; the recent models / files list; the model folder browser's listing.

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
#include "ui/widgets/file_picker.h"

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

namespace {

// Waits (bounded) until the worker has answered `generation`.
bool wait_for(const Worker& worker, std::uint64_t generation) {
    for (int i = 0; i < 1000; ++i) {
        if (worker.answered() >= generation && !worker.busy()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Submits `r` and returns its result, once the worker has answered it.
std::shared_ptr<const Snapshot> result_of(Worker& worker, const Request& r) {
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    REQUIRE(worker.latest());
    REQUIRE(worker.latest()->generation == g);
    return worker.latest();
}

}   // namespace

TEST_CASE("app state: fitting to a model, stepping and toggling") {
    AppState s;
    s.layer = 5;
    s.head = 9;
    s.disabled_heads = {{true, false, true, true, true}};   // from --disable before the model was known
    fit_to_model(s, 2, 4);
    CHECK(s.layer == 1);
    CHECK(s.head == 3);
    REQUIRE(s.disabled_heads.size() == 2);
    CHECK(s.disabled_heads[0] == std::vector<bool>{true, false, true, true});   // kept where it fits
    CHECK(s.disabled_heads[1] == std::vector<bool>(4, false));
    CHECK(s.hidden_heads.size() == 2);

    step_layer(s, -3, 2);
    CHECK(s.layer == 0);
    step_head(s, 1, 4);
    CHECK(s.head == 3);   // clamped at the last head
    toggle_disabled(s, 1, 2);
    CHECK(s.disabled_heads[1][2]);
    toggle_disabled(s, 1, 2);
    CHECK_FALSE(s.disabled_heads[1][2]);
    toggle_disabled(s, 7, 0);   // out of range: nothing happens

    const Request r = make_request(s);
    CHECK(r.disabled_heads == s.disabled_heads);
    CHECK_FALSE(r.also_flip_causal);
    CHECK(make_request(s, {.flipped_causal = true}).also_flip_causal);
    CHECK_FALSE(make_request(s, {.flipped_causal = true}).stages_layer.has_value());   // only when asked
    CHECK(make_request(s, {.stages_of_layer = true}).stages_layer == std::optional<int>(s.layer));
    s.compare_text = "another sentence";
    CHECK(make_request(s).compare_text.empty());   // input B runs only while a view needs it
    CHECK(make_request(s, {.second_input = true}).compare_text == "another sentence");
}

TEST_CASE("app state: sizing the head flags to a newly loaded model asks for nothing new") {
    // The first request goes out before the model's shape is known (no flags); its result
    // sizes them [L][H], all on. That must give the same request, or the worker would run
    // the model a second time for nothing.
    AppState s;
    const Request before = make_request(s);
    CHECK(before.disabled_heads.empty());
    fit_to_model(s, 3, 4);
    REQUIRE(s.disabled_heads.size() == 3);
    CHECK(make_request(s) == before);
    toggle_disabled(s, 2, 1);
    const Request off = make_request(s);
    CHECK_FALSE(off == before);
    CHECK(off.disabled_heads == s.disabled_heads);
    toggle_disabled(s, 2, 1);   // back on: the same computation as before
    CHECK(make_request(s) == before);
}

TEST_CASE("app state: the showcase head is the most nameable one (induction, then previous token, then by score)") {
    // 2 layers x 3 heads; each head given exactly the metric its role is read from.
    std::vector<HeadMetrics> metrics(6);
    for (HeadMetrics& m : metrics) m.induction = 0.0;
    CHECK_FALSE(showcase_head(metrics, 3, false).has_value());   // no head has a name: leave the selection
    metrics[1].sink_mass = 0.95;                                 // 0.1: first token
    metrics[2].prev_token = 0.6;                                 // 0.2: previous token
    metrics[4].prev_token = 0.9;                                 // 1.1: a sharper previous-token head
    auto head = showcase_head(metrics, 3, false);
    REQUIRE(head.has_value());
    CHECK(head->layer == 1);
    CHECK(head->head == 1);
    metrics[5].induction = 0.45;   // 1.2: induction, weaker by score, still first
    head = showcase_head(metrics, 3, false);
    REQUIRE(head.has_value());
    CHECK(head->layer == 1);
    CHECK(head->head == 2);
    metrics[3].induction = 0.7;   // 1.0: the stronger induction head
    head = showcase_head(metrics, 3, false);
    REQUIRE(head.has_value());
    CHECK(head->layer == 1);
    CHECK(head->head == 0);
}

TEST_CASE("app state: a dropped image switches a text model to the image model, other files are refused") {
    AppState s;
    CHECK(open_dropped_file(s, "/pics/Cat.JPG"));
    CHECK(s.image_path == "/pics/Cat.JPG");
    CHECK(s.model.name == "builtin:toy-vit");
    CHECK_FALSE(open_dropped_file(s, "/docs/notes.txt"));
    CHECK(s.image_path == "/pics/Cat.JPG");
    // The trained text model (what a first launch opens on) cannot take a picture either.
    AppState first_launch;
    choose_model(first_launch, "builtin:tiny-story");
    CHECK(open_dropped_file(first_launch, "/pics/dog.png"));
    CHECK(first_launch.model.name == "builtin:toy-vit");
}

TEST_CASE("app state: the demo picture follows the demo image models, a chosen picture stays") {
    const std::string picture = (headscope::assets_dir() / "shapes.png").string();
    const std::string scene = (headscope::assets_dir() / "scenes" / "star.png").string();
    AppState s;
    s.image_path = picture;
    choose_model(s, "builtin:tiny-shapes");
    CHECK(s.image_path == scene);
    choose_model(s, "builtin:toy-vit");
    CHECK(s.image_path == picture);
    choose_picture(s, "/pics/cat.png");
    choose_model(s, "builtin:tiny-shapes");
    CHECK(s.image_path == "/pics/cat.png");
    // The scene itself, asked for by the user (--image, picked, dropped), stays too.
    AppState t;
    t.image_path = picture;
    choose_picture(t, scene);
    choose_model(t, "builtin:toy-vit");
    CHECK(t.image_path == scene);
    suit_demo_picture(t);
    CHECK(t.image_path == scene);
}

TEST_CASE("worker: computes off the caller's thread, reports errors, and the newest request wins") {
    Worker worker;
    Request r;
    r.text = "one two three";
    const auto first = worker.submit(r);
    REQUIRE(wait_for(worker, first));
    auto snapshot = worker.latest();
    REQUIRE(snapshot);
    CHECK(snapshot->generation == first);
    CHECK(snapshot->input.labels.size() == 3);
    CHECK(snapshot->trace.layers.size() == 2);

    r.text = "";   // an empty sentence: an error, and the last good result stays
    const auto bad = worker.submit(r);
    REQUIRE(wait_for(worker, bad));
    CHECK(worker.latest()->generation == first);
    CHECK(worker.latest_error().first == bad);
    CHECK(worker.latest_error().second.find("empty") != std::string::npos);

    // A burst of requests: the last one is what ends up shown.
    std::uint64_t last = 0;
    for (int i = 1; i <= 20; ++i) {
        r.text = "word " + std::to_string(i);
        r.causal = i % 2 == 0;
        last = worker.submit(r);
    }
    REQUIRE(wait_for(worker, last));
    CHECK(worker.latest()->generation == last);
    CHECK(worker.latest()->input.labels.back() == "20");
    CHECK(worker.latest_error().second.empty());

    r.also_flip_causal = true;
    const auto flipped = worker.submit(r);
    REQUIRE(wait_for(worker, flipped));
    REQUIRE(worker.latest()->flipped.has_value());
    CHECK(worker.latest()->trace.mask.has_value() != worker.latest()->flipped->mask.has_value());
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
    CHECK(make_request(s).own_resolution);
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

TEST_CASE(
    "app state: a shorter result lets go of a pinned query past its end; the demo ViT never gets own resolution") {
    AppState s;
    s.query = 1000;   // a patch of a 1025-token own-resolution run
    fit_to_length(s, 1025);
    CHECK(s.query == 1000);
    fit_to_length(s, 197);
    CHECK(s.query == -1);
    s.query = 5;
    fit_to_length(s, 197);
    CHECK(s.query == 5);

    s.own_resolution = true;
    s.model.name = "builtin:toy-vit";
    CHECK_FALSE(make_request(s).own_resolution);
    s.model.name = "/models/dino-vits16";
    CHECK(make_request(s).own_resolution);
}

TEST_CASE("app state: the custom mask editor forbids, allows, clears and inverts pairs") {
    AppState s;
    set_forbidden(s, 2, 1, true);
    set_forbidden(s, 0, 3, true);
    set_forbidden(s, 2, 1, true);   // twice: still one entry
    CHECK(s.forbidden == std::vector<std::pair<int, int>>{{0, 3}, {2, 1}});
    CHECK(is_forbidden(s, 2, 1));
    set_forbidden(s, 2, 1, false);
    CHECK_FALSE(is_forbidden(s, 2, 1));
    invert_mask(s, 2);   // over 2 x 2: (0, 3) lies outside; all four cells become forbidden
    CHECK(s.forbidden == std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}});
    clear_mask(s);
    CHECK(s.forbidden.empty());
}

TEST_CASE("worker: the custom mask reaches the model, ANDed with the causal mask") {
    Worker worker;
    Request r;
    r.text = "a b c";
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
// of layer 0, column 1 is 0, column 2 the position.
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
        if (!options.disabled_heads.empty()) {
            for (const bool off : options.disabled_heads[0]) enabled -= off ? 1 : 0;
        }
        trace.logits = Matrix::Zero(T, 3);
        for (Eigen::Index t = 0; t < T; ++t) {
            trace.logits(t, 0) = static_cast<float>(enabled);
            trace.logits(t, 2) = static_cast<float>(t);
        }
        return trace;
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
    r.text = text;
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

TEST_CASE("app state: choosing a model, and going back after a cancelled or failed load") {
    AppState s;
    s.query = 3;
    s.causal = true;
    choose_model(s, "/models/gpt2");
    CHECK(s.model.name == "/models/gpt2");
    CHECK(s.query == -1);                // positions of the old input
    CHECK_FALSE(s.causal.has_value());   // the new model's default
    ModelChoice previous;
    previous.name = "builtin:toy-vit";
    previous.config.seed = 7;
    return_to_model(s, previous);
    CHECK(s.model == previous);
    return_to_model(s, std::nullopt);   // nothing loaded yet: the default built-in model
    CHECK(s.model == ModelChoice{});

    CHECK(is_builtin_model("builtin:toy-text"));
    CHECK_FALSE(is_builtin_model("/x/builtin:y"));
    CHECK(model_display_name("builtin:toy-vit") == "builtin:toy-vit");
    CHECK(model_display_name("/data/models/gpt2-medium/") == "gpt2-medium");
    CHECK(model_display_name("gpt2") == "gpt2");

    ModelInfo info;
    info.causal = true;
    CHECK(causal_on(s, info));   // unset: the model's default
    s.causal = false;
    CHECK_FALSE(causal_on(s, info));
    CHECK(make_request(s).causal == std::optional<bool>(false));
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

TEST_CASE("worker: the intact logits are computed once per model, input and mask, not per ablation") {
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
    CHECK(fake.forwards->load() == 3);   // the ablated run and, once, the intact one
    CHECK(ablated->ablated);
    REQUIRE(ablated->intact_logits);
    CHECK(ablated->trace.logits(0, 0) == 1.0f);       // one head left
    CHECK((*ablated->intact_logits)(0, 0) == 2.0f);   // both heads
    CHECK(ablated->intact_logits->rows() == 3);

    r.disabled_heads = {{false, true}};
    const auto other_head = run();
    CHECK(fake.forwards->load() == 4);   // cached: only the ablated run
    CHECK(other_head->intact_logits == ablated->intact_logits);

    r.text = "abcd";   // another input: the intact run again
    const auto longer = run();
    CHECK(fake.forwards->load() == 6);
    CHECK(longer->intact_logits->rows() == 4);
    r.causal = true;   // another mask: again
    run();
    CHECK(fake.forwards->load() == 8);
    r.forbidden = {{1, 0}};
    run();
    CHECK(fake.forwards->load() == 10);

    r.disabled_heads = {{false, false}};   // nothing disabled: nothing to compare with
    const auto none = run();
    CHECK(fake.forwards->load() == 11);
    CHECK_FALSE(none->ablated);
    CHECK_FALSE(none->intact_logits);
}

TEST_CASE("predictions: which rows, and the ablated top-k beside the intact one") {
    Snapshot s;
    s.input.labels = {"a", "[MASK]", "c", "<mask>"};
    s.trace.logits = Matrix::Zero(4, 3);
    s.info.causal = true;
    CHECK(prediction_target(s, -1).kind == PredictionKind::next_token);
    CHECK(prediction_target(s, -1).rows == std::vector<int>{3});   // after the last token
    CHECK(prediction_target(s, 1).rows == std::vector<int>{1});
    CHECK(prediction_target(s, 9).rows == std::vector<int>{3});   // past the input: the default
    s.info.causal = false;                                        // BERT-like: fill-ins
    CHECK(prediction_target(s, -1).kind == PredictionKind::fill_in);
    CHECK(prediction_target(s, -1).rows == std::vector<int>{1, 3});
    CHECK(prediction_target(s, 2).rows == std::vector<int>{2});
    s.input.labels = {"a", "b", "c", "d"};
    CHECK(prediction_target(s, -1).rows.empty());
    s.trace.logits = Matrix::Zero(1, 5);   // a classifier
    CHECK(prediction_target(s, 2).kind == PredictionKind::classes);
    CHECK(prediction_target(s, 2).rows == std::vector<int>{0});
    s.trace.logits.resize(0, 0);
    CHECK(prediction_target(s, 0).kind == PredictionKind::none);

    // Softmax of (ln 1, ln 3, ln 6) = (0.1, 0.3, 0.6); intact (ln 6, ln 3, ln 1).
    s.trace.logits = Matrix(1, 3);
    s.trace.logits << std::log(1.0f), std::log(3.0f), std::log(6.0f);
    auto labels = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"cat", "dog\n", "emu"});
    s.output_labels = labels;
    PredictionTable alone = prediction_table(s, 0, 2);
    REQUIRE(alone.shown.size() == 2);
    CHECK(alone.shown[0].label == "emu");
    CHECK(std::abs(alone.shown[0].probability - 0.6f) < 1e-6f);
    CHECK(alone.shown[1].label == "dog\\n");
    CHECK(std::isnan(alone.shown[0].other));
    CHECK(alone.intact.empty());

    auto intact = std::make_shared<Matrix>(1, 3);
    *intact << std::log(6.0f), std::log(3.0f), std::log(1.0f);
    s.intact_logits = intact;
    s.ablated = true;
    const PredictionTable both = prediction_table(s, 0, 2);
    REQUIRE(both.intact.size() == 2);
    CHECK(both.intact[0].label == "cat");
    CHECK(std::abs(both.intact[0].probability - 0.6f) < 1e-6f);
    CHECK(std::abs(both.intact[0].other - 0.1f) < 1e-6f);   // "cat" with the heads disabled
    CHECK(std::abs(both.shown[0].other - 0.1f) < 1e-6f);    // "emu" in the intact model
    CHECK(prediction_table(s, 5, 2).shown.empty());         // no such row
    CHECK(printable_label(std::string("a\tb\x01", 4)) == "a\\tb\\x01");
}

TEST_CASE("recent models and files: where, round trip, bounded, missing entries dropped, corrupt file ignored") {
    CHECK(recent_file_path("/cfg", "/home/u") == "/cfg/headscope/recent.txt");
    CHECK(recent_file_path(nullptr, "/home/u") == "/home/u/.config/headscope/recent.txt");
    CHECK(recent_file_path("relative", "/home/u") == "/home/u/.config/headscope/recent.txt");   // XDG: absolute only
    CHECK(recent_file_path(nullptr, nullptr).empty());

    test::TempDir dir;
    const std::string path = dir.file("config/headscope/recent.txt");
    RecentRead nothing = read_recent(path);   // the first session: no file, no warning
    CHECK(nothing.lists.models.empty());
    CHECK(nothing.warning.empty());

    RecentLists lists;
    for (int i = 0; i < 12; ++i) {
        const std::string folder = dir.file("model " + std::to_string(i));   // a space in the name
        std::filesystem::create_directories(folder);
        push_recent(lists.models, folder);
    }
    push_recent(lists.models, dir.file("model 3"));   // again: moves to the front, once
    CHECK(lists.models.size() == recent_limit);
    CHECK(lists.models.front() == dir.file("model 3"));
    CHECK(std::count(lists.models.begin(), lists.models.end(), dir.file("model 3")) == 1);
    test::write_bytes(dir.file("cat.png"), "x");
    lists.files = {dir.file("cat.png"), dir.file("gone.png")};
    write_recent(path, lists);   // creates config/headscope/

    RecentRead read = read_recent(path);
    CHECK(read.warning.empty());
    CHECK(read.lists.models == lists.models);
    CHECK(read.lists.files == std::vector<std::string>{dir.file("cat.png")});   // gone.png dropped

    std::filesystem::remove(dir.file("model 3"));   // a folder deleted between sessions
    read = read_recent(path);
    CHECK(read.lists.models.size() == recent_limit - 1);
    CHECK(read.lists.models.front() == dir.file("model 11"));

    // A longer list than the bound (edited by hand) is cut; a corrupt file is ignored.
    std::string text = "# headscope recent models and files, newest first (safe to delete)\n";
    for (int i = 0; i < 12; ++i) text += "model " + dir.file("model " + std::to_string(i == 3 ? 4 : i)) + "\n";
    test::write_bytes(path, text);
    CHECK(read_recent(path).lists.models.size() == recent_limit);
    test::write_bytes(path, std::string("\x89PNG\r\n\x1a\n\0\0", 10));
    read = read_recent(path);
    CHECK(read.lists.models.empty());
    CHECK(read.warning.find(path) != std::string::npos);
    CHECK(read.warning.find("ignored") != std::string::npos);
    test::write_bytes(path, "# headscope recent models and files, newest first (safe to delete)\nmodel\nplugin /x\n");
    CHECK(read_recent(path).warning.find("line 2") != std::string::npos);
    // The next write replaces it whole.
    write_recent(path, lists);
    CHECK(read_recent(path).warning.empty());
}

TEST_CASE("file picker: model folders (config.json inside) are marked, image files listed only for images") {
    test::TempDir dir;
    std::filesystem::create_directories(dir.file("gpt2"));
    test::write_bytes(dir.file("gpt2/config.json"), "{}");
    std::filesystem::create_directories(dir.file("photos"));
    std::filesystem::create_directories(dir.file(".hidden"));
    test::write_bytes(dir.file("cat.png"), "x");
    test::write_bytes(dir.file("notes.txt"), "x");
    std::string error;
    const auto models = ui::list_folder(dir.path(), ui::PickKind::model_folder, error);
    CHECK(error.empty());
    REQUIRE(models.size() == 2);
    CHECK(models[0].name == "gpt2");
    CHECK(models[0].is_model);
    CHECK(models[1].name == "photos");
    CHECK_FALSE(models[1].is_model);
    const auto images = ui::list_folder(dir.path(), ui::PickKind::image_file, error);
    REQUIRE(images.size() == 3);
    CHECK(images[2].name == "cat.png");
    CHECK_FALSE(images[0].is_model);   // not looked at for images
    CHECK(ui::is_model_folder(dir.file("gpt2")));
    CHECK_FALSE(ui::is_model_folder(dir.file("photos")));
    ui::list_folder(dir.file("no-such-folder"), ui::PickKind::model_folder, error);
    CHECK(error.find("no-such-folder") != std::string::npos);
}

TEST_CASE("worker: toggling a head resumes at its layer, and the result equals a run from scratch") {
    Worker worker;
    Request r;
    r.model.name = "builtin:toy-text";
    r.model.config.n_layers = 3;
    r.text = "the cat sat on the mat";
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
    r.text = "a dog ran";
    const auto other = run();
    CHECK(other->resumed_at == 0);
    CHECK(other->input_key != first->input_key);
}

TEST_CASE("worker: wakes the window's loop once per answered request, results and errors alike") {
    Worker worker;
    std::atomic<int> wakes{0};
    worker.set_on_answer([&] { ++wakes; });
    Request r;
    r.model.name = "builtin:toy-text";
    r.text = "the cat sat";
    const auto first = result_of(worker, r);
    r.text = "";   // an error is an answer too
    const auto g = worker.submit(r);
    REQUIRE(wait_for(worker, g));
    CHECK_FALSE(worker.latest_error().second.empty());
    // The call comes after the answer is readable: allow it the moment to land.
    for (int i = 0; i < 200 && wakes.load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(wakes.load() == 2);
}

TEST_CASE("worker: a run keeps the stages of the layer the Stages view shows only; another layer resumes from the "
          "lower one") {
    Worker worker;
    Request r;
    r.model.name = "builtin:toy-text";
    r.text = "the cat sat on the mat";
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
    r.text = "the cat sat";
    r.stages_layer = 1;   // the Stages view is open on layer 1: its stages are joined too
    const auto run = [&] { return result_of(worker, r); };
    const auto first = run();
    CHECK(first->reused_positions == 0);
    r.text = "the cat sat on the mat";
    const auto typed = run();
    const auto T = typed->input.embeddings.rows();
    CHECK(typed->reused_positions > 0);
    CHECK(typed->reused_positions < T);
    const auto model = open_model(r.model.name, ToyConfig{});
    RunOptions options;
    options.detail = TraceDetail::all_stages;
    const ModelTrace fresh = model->forward(typed->input, options);
    CHECK((typed->trace.logits - fresh.logits).cwiseAbs().maxCoeff() < 1e-4f);
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
    // An edit in the middle changes an early position: nothing after it is reused.
    r.text = "a cat sat on the mat";
    const auto edited = run();
    CHECK(edited->reused_positions == 0);
}

TEST_CASE("background jobs: results by key, a cancel sticks until restarted, forget drops a running job's result") {
    BackgroundJobs jobs;
    const auto wait_idle = [&] {
        for (int i = 0; i < 2000 && jobs.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        REQUIRE_FALSE(jobs.busy());
    };
    std::atomic<int> runs{0};
    const BackgroundJobs::Work answer = [&](const LoadControl&) -> std::shared_ptr<const void> {
        ++runs;
        return std::make_shared<const int>(42);
    };
    jobs.start("a", answer);
    wait_idle();
    REQUIRE(jobs.result<int>("a"));
    CHECK(*jobs.result<int>("a") == 42);
    jobs.start("a", answer);   // kept: not run again
    wait_idle();
    CHECK(runs.load() == 1);
    jobs.restart("a", answer);   // Scan again
    wait_idle();
    CHECK(runs.load() == 2);

    // A slow job, cancelled: its key reports "cancelled" and start() leaves it so.
    const BackgroundJobs::Work slow = [](const LoadControl& control) -> std::shared_ptr<const void> {
        for (int i = 0; i < 2000; ++i) {
            control.report(i / 2000.0);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return std::make_shared<const int>(7);
    };
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

TEST_CASE("worker: token ids typed for a checkpoint without tokenizer files") {
    CHECK(token_ids_typed("464, 3797,3332 \n") == std::vector<std::int64_t>{464, 3797, 3332});
    CHECK(token_ids_typed(" 7 ") == std::vector<std::int64_t>{7});
    // What was typed is quoted as it was, spaces and all.
    CHECK_THROWS_WITH_AS(token_ids_typed("The cat, 4"),
                         "token ids (the checkpoint has no tokenizer files): 'The cat' is not a non-negative whole "
                         "number (expected e.g. 464,3797,3332)",
                         headscope::Error);
    CHECK_THROWS_AS(token_ids_typed("1,,2"), headscope::Error);
    CHECK_THROWS_AS(token_ids_typed("   "), headscope::Error);
}

TEST_CASE("app state: command-line choices that do not fit the model are named, with what is shown instead") {
    ModelInfo info;
    info.name = "builtin:tiny-story";
    info.n_layers = 2;
    info.n_heads = 4;
    info.takes_text = true;
    StartChoices fits;
    fits.layer = 1;
    fits.head = 3;
    fits.query = 79;
    fits.disabled = {{0, 1}, {1, 3}};
    fits.text_given = true;
    CHECK(start_choice_notes(fits, info, 80).empty());

    StartChoices wrong;
    wrong.layer = 9;
    wrong.head = -1;
    wrong.query = 80;
    wrong.disabled = {{0, 1}, {5, 9}, {1, 4}};
    wrong.image_given = true;
    const std::vector<std::string> notes = start_choice_notes(wrong, info, 80);
    REQUIRE(notes.size() == 5);
    CHECK(notes[0] == "--layer 9: builtin:tiny-story has layers 0..1; showing layer 1");
    CHECK(notes[1] == "--head -1: builtin:tiny-story has heads 0..3; showing head 0");
    CHECK(notes[2] == "--query 80: the input has positions 0..79; no query pinned");
    CHECK(notes[3] == "--disable 5.9,1.4: builtin:tiny-story has layers 0..1 and heads 0..3; not disabled");
    CHECK(notes[4] == "--image: builtin:tiny-story reads text, not pictures; the picture is not used");

    ModelInfo vit = info;
    vit.name = "vit";
    vit.takes_text = false;
    vit.takes_image = true;
    StartChoices text;
    text.text_given = true;
    CHECK(start_choice_notes(text, vit, 197) ==
          std::vector<std::string>{"--text: vit reads pictures, not text; the text is not used"});
}

TEST_CASE("app state: the compare view's B follows A until the user picks it") {
    AppState s;
    s.layer = 1;
    s.head = 3;
    follow_compare_b(s, 2, 4);
    CHECK(s.compare_layer == 1);
    CHECK(s.compare_head == 0);   // the head after 3 of 4 wraps to 0
    s.compare_mode = CompareMode::two_layers;
    follow_compare_b(s, 2, 4);
    CHECK(s.compare_layer == 0);   // the layer after 1 of 2
    s.compare_b_chosen = true;
    s.compare_layer = 1;
    s.compare_head = 3;
    follow_compare_b(s, 2, 4);
    CHECK(s.compare_layer == 1);   // chosen: left alone, even equal to A
    CHECK(s.compare_head == 3);
}

TEST_CASE("app state: another model starts with every head on and no custom mask") {
    AppState s;
    fit_to_model(s, 2, 4);
    toggle_disabled(s, 1, 3);
    set_forbidden(s, 2, 1, true);
    s.editing_mask = true;
    REQUIRE(any_disabled(s.disabled_heads));
    REQUIRE_FALSE(s.forbidden.empty());
    leave_model_choices(s);
    CHECK_FALSE(any_disabled(s.disabled_heads));
    CHECK(s.forbidden.empty());
    CHECK_FALSE(s.editing_mask);
    CHECK(s.disabled_heads.size() == 2);   // still sized: only the choices go
    // Choosing another model lets them go at once: its first run is asked without them.
    toggle_disabled(s, 0, 1);
    set_forbidden(s, 1, 0, true);
    choose_model(s, "builtin:toy-vit");
    CHECK_FALSE(any_disabled(s.disabled_heads));
    CHECK(s.forbidden.empty());
}
