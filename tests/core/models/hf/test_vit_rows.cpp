// ViT: the last layer's MLP runs for the rows the classifier reads.

#include "core/base/error.h"
#include "core/fast_path_support.h"
#include "core/image/image.h"
#include "core/models/model_registry.h"
#include "core/nn/attention.h"
#include "core/nn/mask.h"
#include "core/tensor/kernels/exp_sum.h"
#include "core/tensor/kernels/weight_panels.h"
#include "core/tensor/parallel.h"
#include "core/tensor/weight_matrix.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace headscope;
using namespace headscope::test;

TEST_CASE("ViT: with a classifier, the last layer's MLP runs for the rows the head reads alone, without one for all") {
    // The logits from those rows are PyTorch's (the checkpoint goldens, which cover these
    // three folders); here, that no other row is computed, or shown as data.
    const std::string checkpoints = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/";
    const RgbImage image = decode_image_file(std::string(HEADSCOPE_GOLDEN_DIR) + "/../images/rgb.png");
    struct Case {
        const char* folder;
        Eigen::Index read_rows;   // -1: every row
        Eigen::Index labels;
    };
    for (const Case& c : {Case{"vit_tiny", 1, 5}, Case{"deit_tiny_distilled", 2, 4}, Case{"vit_tiny_f16", -1, 0}}) {
        CAPTURE(c.folder);
        const auto model = open_model(checkpoints + c.folder, ToyConfig{});
        const ModelInput input = model->encode_image(image);
        const Eigen::Index T = input.embeddings.rows();
        for (const bool resumed : {false, true}) {
            CAPTURE(resumed);
            RunOptions options;
            options.keep_layer_inputs = true;
            const ModelTrace whole = model->forward(input, options);
            // A head toggled in the last layer: resumed there, the same rows again.
            RunOptions toggled = options;
            toggled.resume_from = &whole;
            toggled.resume_layer = model->info().n_layers - 1;
            toggled.disabled_heads = HeadMask(model->info().n_layers, model->info().n_heads);
            toggled.disabled_heads.set(toggled.disabled_heads.layers() - 1, 0);
            const ModelTrace trace = resumed ? model->forward(input, toggled) : whole;
            CHECK(trace.hidden.rows() == (c.read_rows < 0 ? T : c.read_rows));
            CHECK(trace.hidden.cols() == model->info().width);
            CHECK(trace.hidden.allFinite());
            CHECK(trace.logits.size() == c.labels);
            CHECK(trace.layers.size() == static_cast<std::size_t>(model->info().n_layers));
            CHECK(trace.layers.back().output.rows() == T);   // the last attention: every row
        }
    }
}

TEST_CASE("ViT: a kept prefix offered to an encoder is not taken: its head reads the first rows, all computed") {
    // The causal mask on, and a run offered a kept prefix (as the window's plan offers one
    // when two inputs begin alike): the encoder runs whole, equal to a run without it.
    const std::string checkpoints = std::string(HEADSCOPE_GOLDEN_DIR) + "/../checkpoints/";
    const RgbImage image = decode_image_file(std::string(HEADSCOPE_GOLDEN_DIR) + "/../images/rgb.png");
    for (const char* folder : {"vit_tiny", "vit_tiny_f16"}) {
        CAPTURE(folder);
        const auto model = open_model(checkpoints + folder, ToyConfig{});
        const ModelInput input = model->encode_image(image);
        RunOptions causal;
        causal.causal = true;
        causal.keep_layer_inputs = true;
        const ModelTrace kept = model->forward(input, causal);
        RunOptions offered = causal;
        offered.prefix_from = &kept;
        offered.prefix_rows = input.embeddings.rows() / 2;
        const ModelTrace reused = model->forward(input, offered);
        CHECK(reused.hidden == kept.hidden);
        CHECK(reused.logits.get() == kept.logits.get());
        CHECK(reused.layers.back().heads[0].weights == kept.layers.back().heads[0].weights);
    }
}
