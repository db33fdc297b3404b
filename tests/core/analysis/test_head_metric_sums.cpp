// A run whose first p positions are a kept run's measures only rows p.. of its maps, from
// the kept run's totals (HeadMetricSums), and must give what measuring every row gives:
// bit for bit, since the totals are taken in the same order. On the trained byte-level
// model (one token per character), with repeated words for the induction score.

#include "core/analysis/head_metrics.h"
#include "core/base/error.h"
#include "core/models/model_registry.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace headscope;

namespace {

struct Measured {
    std::vector<HeadMetrics> metrics;
    std::vector<HeadMetricSums> sums;
};

Measured measure(const Model& model, const std::string& text, const Measured* kept = nullptr,
                 Eigen::Index from_row = 0) {
    const ModelInput input = model.encode_text(text);
    Measured m;
    if (kept != nullptr) m.sums = kept->sums;
    m.metrics = compute_model_metrics(model.forward(input, RunOptions{}), metric_context(input, model.info()), 0,
                                      &m.sums, from_row);
    return m;
}

std::vector<HeadMetrics> measured_whole(const Model& model, const std::string& text) {
    const ModelInput input = model.encode_text(text);
    return compute_model_metrics(model.forward(input, RunOptions{}), metric_context(input, model.info()));
}

}   // namespace

TEST_CASE("metric totals: text typed or changed at the end is measured from the kept rows, bit for bit") {
    const auto model = open_model("builtin:tiny-story", ToyConfig{});
    const std::string base = "And the cat sat on the mat, and the cat";   // 39 bytes: 39 tokens
    const Measured first = measure(*model, base);
    REQUIRE(first.sums.size() == first.metrics.size());
    CHECK(first.metrics == measured_whole(*model, base));   // keeping the totals changes nothing
    for (const HeadMetricSums& head : first.sums) {
        CHECK(head.first == 39 - metric_totals_kept);   // the last 16 rows' totals, and all of them
        CHECK(head.at.size() == static_cast<std::size_t>(metric_totals_kept) + 1);
    }

    // Typed at the end: rows 39.. alone.
    const std::string typed = base + " sat";
    const Measured appended = measure(*model, typed, &first, 39);
    const std::vector<HeadMetrics> whole = measured_whole(*model, typed);
    CHECK(appended.metrics == whole);
    bool some_induction = false;
    for (const HeadMetrics& m : whole) some_induction = some_induction || m.induction.has_value();
    CHECK(some_induction);   // the repeated words give the induction score a part in the check
    // The totals before row 39 that the longer input's last 16 rows reach are kept too.
    for (const HeadMetricSums& head : appended.sums) {
        CHECK(head.first == 43 - metric_totals_kept);
        CHECK(head.through(43) != nullptr);
    }

    // The last two characters changed (positions 37 and 38 onwards differ): from row 37 of
    // the totals kept after typing, which reach back past it.
    const std::string changed = base.substr(0, 37) + "og sat";
    CHECK(measure(*model, changed, &appended, 37).metrics == measured_whole(*model, changed));
}

TEST_CASE("metric totals: a start no kept totals reach is refused with one line") {
    const auto model = open_model("builtin:tiny-story", ToyConfig{});
    const Measured first = measure(*model, "And the cat sat on the mat, and the cat");
    // Row 3 is further back than the last 16 rows kept.
    CHECK_THROWS_WITH_AS(measure(*model, "And the dog sat on the mat, and the cat", &first, 3),
                         "metrics: a head's totals through row 3 were not kept", Error);
    CHECK_THROWS_WITH_AS(measure(*model, "And the cat", nullptr, 2),
                         "metrics: rows from 2 need every head's totals through it", Error);
}
