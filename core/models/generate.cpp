#include "core/models/generate.h"

#include "core/base/error.h"

#include <vector>

namespace headscope {

ModelInput generate_greedy(const Model& model, const ModelInput& input, Eigen::Index steps,
                           const LoadControl& control) {
    const ModelInfo& info = model.info();
    if (!info.encoder_decoder || !input.source) throw Error(info.name + ": generation needs an encoder-decoder model");
    std::vector<std::int64_t> ids = {info.decoder_start_id};
    ModelInput target = model.encode_target_ids(input, ids);
    RunOptions options;
    options.last_logit_rows = 1;
    for (Eigen::Index step = 0; step < steps; ++step) {
        control.report(static_cast<double>(step) / static_cast<double>(steps));
        const ModelTrace trace = model.forward(target, options);
        const Matrix& logits = trace.logits.get();
        Eigen::Index best = 0;
        for (Eigen::Index v = 1; v < logits.cols(); ++v) {
            if (logits(0, v) > logits(0, best)) best = v;
        }
        ids.push_back(best);
        target = model.encode_target_ids(input, ids);
        if (best == info.end_id) break;
    }
    return target;
}

}   // namespace headscope
