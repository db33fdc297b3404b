// The predictions panel's rows (session/predictions.h), from a snapshot.

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

#include <limits>

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
    s.trace.logits = Matrix();
    CHECK(prediction_target(s, 0).kind == PredictionKind::none);

    // Softmax of (ln 1, ln 3, ln 6) = (0.1, 0.3, 0.6); intact (ln 6, ln 3, ln 1).
    s.trace.logits = Matrix{{std::log(1.0f), std::log(3.0f), std::log(6.0f)}};
    auto labels = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"cat", "dog\n", "emu"});
    s.output_labels = labels;
    PredictionTable alone = prediction_table(s, 0, 2);
    REQUIRE(alone.shown.size() == 2);
    CHECK(alone.shown[0].label == "emu");
    CHECK(std::abs(alone.shown[0].probability - 0.6f) < 1e-6f);
    CHECK(alone.shown[1].label == "dog\\n");
    CHECK(std::isnan(alone.shown[0].other));
    CHECK(alone.intact.empty());

    auto intact = std::make_shared<ModelTrace>();
    intact->logits = Matrix{{std::log(6.0f), std::log(3.0f), std::log(1.0f)}};
    s.intact = intact;
    s.intact_logits = std::shared_ptr<const Matrix>(intact, &intact->logits.get());
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

TEST_CASE("predictions: as tab-separated text, with the intact probability when heads are off") {
    PredictionTable table;
    table.row = 4;
    table.shown = {{7, "cat", 0.5f, std::numeric_limits<float>::quiet_NaN()},
                   {9, "a\tb", 0.25f, std::numeric_limits<float>::quiet_NaN()}};
    CHECK(predictions_tsv({table}) == "position\trank\toutput\tprobability\n"
                                      "4\t1\tcat\t0.5\n"
                                      "4\t2\ta\\tb\t0.25\n");   // a tab in a token escaped, never a column
    table.shown[0].other = 0.75f;
    table.shown[1].other = 0.125f;
    CHECK(predictions_tsv({table}) == "position\trank\toutput\tprobability\tintact probability\n"
                                      "4\t1\tcat\t0.5\t0.75\n"
                                      "4\t2\ta\\tb\t0.25\t0.125\n");
    CHECK(predictions_tsv({}) == "position\trank\toutput\tprobability\n");
}
