// The predictions panel's arithmetic: softmax of one logits row and its k largest
// entries, against hand-computed values (absolute tolerances: probabilities are <= 1).

#include "core/analysis/top_predictions.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace headscope;

namespace {

constexpr float tolerance = 1e-6f;

std::vector<Eigen::Index> indices_of(const std::vector<Prediction>& predictions) {
    std::vector<Eigen::Index> out;
    for (const Prediction& p : predictions) out.push_back(p.index);
    return out;
}

}   // namespace

TEST_CASE("top predictions: softmax of log(1), log(2), log(3), log(4) is 1/10 .. 4/10") {
    const std::vector<float> row = {std::log(2.0f), std::log(4.0f), std::log(1.0f), std::log(3.0f)};
    const auto top = top_predictions(row, 3);
    REQUIRE(top.size() == 3);
    CHECK(indices_of(top) == std::vector<Eigen::Index>{1, 3, 0});
    CHECK(std::abs(top[0].probability - 0.4f) < tolerance);
    CHECK(std::abs(top[1].probability - 0.3f) < tolerance);
    CHECK(std::abs(top[2].probability - 0.2f) < tolerance);
    CHECK(top[0].logit == row[1]);
    // The same probabilities by index, for the columns not in the top 3 too.
    const std::vector<Eigen::Index> asked = {2, 1, 7, -1};
    const auto p = probabilities_at(row, asked);
    CHECK(std::abs(p[0] - 0.1f) < tolerance);
    CHECK(std::abs(p[1] - 0.4f) < tolerance);
    CHECK(std::isnan(p[2]));   // outside the row
    CHECK(std::isnan(p[3]));
}

TEST_CASE("top predictions: equal logits keep column order, also across the cut at k") {
    const std::vector<float> row = {5.0f, 1.0f, 5.0f, 1.0f, 5.0f, 7.0f};
    CHECK(indices_of(top_predictions(row, 3)) == std::vector<Eigen::Index>{5, 0, 2});
    CHECK(indices_of(top_predictions(row, 5)) == std::vector<Eigen::Index>{5, 0, 2, 4, 1});
    const std::vector<float> flat(4, 0.0f);
    const auto top = top_predictions(flat, 2);
    CHECK(indices_of(top) == std::vector<Eigen::Index>{0, 1});
    for (const Prediction& p : top) CHECK(std::abs(p.probability - 0.25f) < tolerance);
}

TEST_CASE("top predictions: large logits do not overflow, k past the row's length, k = 0") {
    // exp(1000) overflows float and double; after subtracting the max: 1 / (1 + e^-1).
    const std::vector<float> row = {1000.0f, 999.0f};
    const auto top = top_predictions(row, 5);
    REQUIRE(top.size() == 2);
    CHECK(std::abs(top[0].probability - 1.0f / (1.0f + std::exp(-1.0f))) < tolerance);
    CHECK(std::abs(top[0].probability + top[1].probability - 1.0f) < tolerance);
    CHECK(top_predictions(row, 0).empty());
    CHECK(top_predictions(std::vector<float>{}, 5).empty());
}

TEST_CASE("top predictions: -inf is probability 0, and NaN, +inf or all -inf give no softmax") {
    constexpr float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> masked = {-inf, 0.0f, -inf};
    const auto top = top_predictions(masked, 2);
    REQUIRE(top.size() == 2);
    CHECK(top[0].index == 1);
    CHECK(top[0].probability == 1.0f);
    CHECK(top[1].index == 0);   // the first of the equal -inf entries
    CHECK(top[1].probability == 0.0f);
    CHECK(top_predictions(std::vector<float>{0.0f, std::nanf("")}, 2).empty());
    CHECK(top_predictions(std::vector<float>{0.0f, inf}, 2).empty());
    CHECK(top_predictions(std::vector<float>{-inf, -inf}, 2).empty());
    const std::vector<Eigen::Index> first = {0};
    CHECK(std::isnan(probabilities_at(std::vector<float>{std::nanf("")}, first)[0]));
}

TEST_CASE("top predictions: a row of a row-major matrix") {
    Matrix logits(2, 3);
    logits << 0.0f, 1.0f, 2.0f, 3.0f, 9.0f, 4.0f;
    const auto row = logits_row(logits, 1);
    REQUIRE(row.size() == 3);
    CHECK(row[1] == 9.0f);
    CHECK(top_predictions(row, 1)[0].index == 1);
}

TEST_CASE("top predictions: labels scored by a sigmoid (SigLIP) each stand alone") {
    // sigmoid(0) = 1/2, sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4: they need not sum to 1.
    const std::vector<float> row = {0.0f, std::log(3.0f), -std::log(3.0f)};
    const auto top = top_predictions(row, 3, LabelScore::sigmoid);
    REQUIRE(top.size() == 3);
    CHECK(top[0].index == 1);
    CHECK(top[0].probability == doctest::Approx(0.75f));
    CHECK(top[1].probability == doctest::Approx(0.5f));
    CHECK(top[2].probability == doctest::Approx(0.25f));
    const std::vector<Eigen::Index> asked = {2, 0};
    const auto p = probabilities_at(row, asked, LabelScore::sigmoid);
    CHECK(p[0] == doctest::Approx(0.25f));
    CHECK(p[1] == doctest::Approx(0.5f));
    // A large logit is 1, not NaN; -inf is 0; NaN leaves no probabilities.
    const float inf = std::numeric_limits<float>::infinity();
    const auto extremes = top_predictions(std::vector<float>{200.0f, -inf}, 2, LabelScore::sigmoid);
    REQUIRE(extremes.size() == 2);
    CHECK(extremes[0].probability == 1.0f);
    CHECK(extremes[1].probability == 0.0f);
    CHECK(top_predictions(std::vector<float>{0.0f, std::nanf("")}, 2, LabelScore::sigmoid).empty());
}
