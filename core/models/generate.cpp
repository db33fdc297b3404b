#include "core/models/generate.h"

#include "core/base/error.h"

#include <algorithm>
#include <string>
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
    // The target stops at the longest input the decoder takes, as transformers' max_length does.
    const Eigen::Index most = info.max_tokens > 0 ? std::min(steps, info.max_tokens - 1) : steps;
    for (Eigen::Index step = 0; step < most; ++step) {
        control.report(static_cast<double>(step) / static_cast<double>(most));
        const ModelTrace trace = model.forward(target, options);
        const Matrix& logits = trace.logits.get();
        if (!logits.allFinite()) {
            throw Error(info.name + ": generation step " + std::to_string(step + 1) +
                        ": the logits are not finite (NaN or infinite), so no token is the most likely");
        }
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
