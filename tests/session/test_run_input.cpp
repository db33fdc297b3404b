// session::encode_run_input (session/run_input.h): the one encoding of what a run reads,
// for the window's boxes and for headscope-cli's input flags alike.

#include "core/base/error.h"
#include "core/models/assets.h"
#include "core/models/model_registry.h"
#include "session/app_state.h"
#include "session/run_input.h"

#include <doctest/doctest.h>

using namespace headscope;
using namespace headscope::session;

namespace {

const std::string source_dir = HEADSCOPE_SOURCE_DIR;

RunInput of_kind(RunInput::Kind kind, std::string text, std::string image_path = {}) {
    RunInput input;
    input.kind = kind;
    input.text = std::move(text);
    input.image_path = std::move(image_path);
    return input;
}

}   // namespace

TEST_CASE("run input: a flag's kind and the window's box give the same model input") {
    const auto model = open_model("builtin:toy-text", {});
    const ModelInput sentence = encode_run_input(*model, of_kind(RunInput::Kind::sentence, "the cat sat"));
    RunInput box = of_kind(RunInput::Kind::as_model_reads, "the cat sat");
    CHECK(encode_run_input(*model, box).ids == sentence.ids);
    CHECK(encode_run_input(*model, box).embeddings == sentence.embeddings);

    // The ids the sentence became, typed back in: through --tokens, or the ticked box.
    std::string typed;
    for (const std::int64_t id : sentence.ids) typed += (typed.empty() ? "" : ", ") + std::to_string(id);
    const ModelInput ids = encode_run_input(*model, of_kind(RunInput::Kind::token_ids, typed));
    CHECK(ids.ids == sentence.ids);
    CHECK(ids.embeddings == sentence.embeddings);
    box.text = typed;
    box.ids_typed = true;
    CHECK(encode_run_input(*model, box).ids == sentence.ids);
}

TEST_CASE("run input: messages name the ids as the program does") {
    const auto model = open_model("builtin:toy-text", {});
    RunInput flag = of_kind(RunInput::Kind::token_ids, "1,x");
    flag.ids_name = "--tokens";
    CHECK_THROWS_WITH_AS(encode_run_input(*model, flag),
                         "--tokens: 'x' is not a non-negative whole number (expected e.g. 464,3797,3332)",
                         headscope::Error);
    RunInput box = of_kind(RunInput::Kind::as_model_reads, "1,x");
    box.ids_typed = true;
    CHECK_THROWS_WITH_AS(encode_run_input(*model, box),
                         "token ids: 'x' is not a non-negative whole number (expected e.g. 464,3797,3332)",
                         headscope::Error);
}

TEST_CASE("run input: the window's boxes give an image model the picture, a flag its own kind") {
    const auto model = open_model("builtin:toy-vit", {});
    const std::string picture = (assets_dir() / "shapes.png").string();
    RunInput box = of_kind(RunInput::Kind::as_model_reads, "a sentence the image model does not read", picture);
    box.ids_typed = true;   // ignored: the model reads pictures
    const ModelInput from_box = encode_run_input(*model, box);
    const ModelInput from_flag = encode_run_input(*model, of_kind(RunInput::Kind::image, "", picture));
    CHECK(from_box.pixels.pixels == from_flag.pixels.pixels);
    CHECK(from_box.embeddings == from_flag.embeddings);
    // A flag of the wrong kind is refused by the model, naming what it takes.
    CHECK_THROWS_WITH_AS(encode_run_input(*model, of_kind(RunInput::Kind::sentence, "a cat")),
                         "builtin:toy-vit takes images, not text (use --image)", headscope::Error);
    CHECK_THROWS_AS(encode_run_input(*model, of_kind(RunInput::Kind::image, "", picture + ".missing")),
                    headscope::Error);
    CHECK(RunInput{}.empty());
    CHECK_FALSE(box.empty());
}

TEST_CASE(
    "run input: a CLIP model scores the labels box's lines, other models refuse labels on the command line only") {
    const auto clip = open_model(source_dir + "/tests/checkpoints/clip_tiny_gelu_bf16", {});
    AppState state;
    state.image_path = source_dir + "/tests/images/rgb.png";
    state.labels = "  510, 5, 511 \n\n510,7,8,511\r\n";   // blank lines and spaces around are left out
    state.labels_are_ids = true;
    const Request request = make_request(state);
    CHECK(request.input.labels == std::vector<std::string>{"510, 5, 511", "510,7,8,511"});
    const ModelInput input = encode_run_input(*clip, request.input);
    REQUIRE(input.prompts.size() == 2);
    CHECK(input.prompts[1].ids == std::vector<std::int64_t>{510, 7, 8, 511});
    CHECK(input.prompt_names == request.input.labels);
    const ModelTrace trace = clip->forward(input, RunOptions{});
    CHECK(trace.logits.cols() == 2);
    CHECK(trace.prompt_traces.size() == 2);

    // The window keeps its labels for the next CLIP model and runs any other without them.
    const auto vit = open_model(source_dir + "/tests/checkpoints/vit_tiny", {});
    CHECK(encode_run_input(*vit, request.input).prompts.empty());
    RunInput flags = request.input;
    flags.unscored_labels_refused = true;
    flags.labels_name = "--label-tokens";
    CHECK_THROWS_WITH_AS(encode_run_input(*vit, flags), doctest::Contains("--label-tokens:"), Error);
    // A label the text tower cannot read: the window scores the others and names it with
    // its place; the command line refuses the run; with no label left, the window too.
    state.labels = "510,5,511\n510,9";
    const ModelInput scored = encode_run_input(*clip, make_request(state).input);
    CHECK(scored.prompt_names == std::vector<std::string>{"510,5,511"});
    REQUIRE(scored.prompts_left_out.size() == 1);
    CHECK(scored.prompts_left_out[0].starts_with("label 2 (\"510,9\"): "));
    CHECK(clip->forward(scored, RunOptions{}).logits.cols() == 1);
    RunInput refusing = make_request(state).input;
    refusing.unreadable_labels_left_out = false;
    CHECK_THROWS_WITH_AS(encode_run_input(*clip, refusing), doctest::Contains("label 2 (\"510,9\")"), Error);
    state.labels = "510,9\n510,8";
    CHECK_THROWS_WITH_AS(encode_run_input(*clip, make_request(state).input), doctest::Contains("label 1 (\"510,9\")"),
                         Error);
    // A long label is quoted short.
    RunInput long_label = refusing;
    long_label.labels = {std::string(500, '7')};
    CHECK_THROWS_WITH_AS(encode_run_input(*clip, long_label), doctest::Contains("7\xE2\x80\xA6 (460 more bytes)"),
                         Error);
}
