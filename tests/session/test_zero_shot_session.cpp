// A zero-shot model (CLIP) in the window's session: the labels are part of what a run is
// (session/compute_plan.h's RunKey), so a run after a label edit never reuses the numbers of
// the labels before it: not the held run, not the intact run beside an ablated one.

#include "core/models/model_registry.h"
#include "session/model_session.h"

#include <doctest/doctest.h>

using namespace headscope;
using namespace headscope::session;

namespace {

Request clip_request(std::vector<std::string> labels) {
    Request request;
    request.model.name = HEADSCOPE_SOURCE_DIR;   // appended: GCC 12 mis-warns on a literal + std::string
    request.model.name += "/tests/checkpoints/clip_tiny_gelu_bf16";
    request.input.image_path = HEADSCOPE_SOURCE_DIR;
    request.input.image_path += "/tests/images/rgb.png";
    request.input.labels = std::move(labels);
    request.input.label_ids = true;
    return request;
}

// The scores of `request` run in a session of its own.
Matrix fresh_logits(const Request& request) {
    ModelSession session;
    session.adopt(open_model_choice(request.model, {}), request.model);
    return session.compute(request, 1)->trace.logits;
}

}   // namespace

TEST_CASE("zero-shot session: after a head is toggled, edited labels are scored afresh, intact and ablated") {
    ModelSession session;
    Request request = clip_request({"510,5,511", "510,42,301,511", "510,7,511"});
    session.adopt(open_model_choice(request.model, {}), request.model);
    std::uint64_t generation = 1;
    session.compute(request, generation++);
    // A head of the last layer switched off: the run resumes there and keeps the labels' runs.
    request.disabled_heads = HeadMask(3, 3);
    request.disabled_heads.set(2, 1);
    const auto resumed = session.compute(request, generation++);
    CHECK(resumed->resumed_at == 2);
    CHECK((Matrix(resumed->trace.logits) - fresh_logits(request)).cwiseAbs().maxCoeff() == 0.0f);
    request.disabled_heads = HeadMask(3, 3);
    request.disabled_heads.set(0, 1);
    session.compute(request, generation++);
    request.disabled_heads = HeadMask{};
    session.compute(request, generation++);

    // The last label edited with every head on: the held run of the old labels must not answer.
    request.input.labels.back() = "510,99,250,511";
    const auto edited = session.compute(request, generation++);
    const Matrix expected = fresh_logits(request);
    REQUIRE(edited->trace.logits.cols() == 3);
    CHECK((Matrix(edited->trace.logits) - expected).cwiseAbs().maxCoeff() == 0.0f);

    // A label removed with a head off: the intact run beside it is of the new labels too.
    request.input.labels.pop_back();
    request.disabled_heads = HeadMask(3, 3);
    request.disabled_heads.set(0, 1);
    const auto ablated = session.compute(request, generation++);
    REQUIRE(ablated->intact_logits != nullptr);
    REQUIRE(ablated->intact_logits->cols() == 2);
    Request intact = request;
    intact.disabled_heads = HeadMask{};
    CHECK((*ablated->intact_logits - fresh_logits(intact)).cwiseAbs().maxCoeff() == 0.0f);
    CHECK((Matrix(ablated->trace.logits) - fresh_logits(request)).cwiseAbs().maxCoeff() == 0.0f);
    // The analysis caches tell the two label sets apart too.
    CHECK(edited->input_key != ablated->input_key);
}
