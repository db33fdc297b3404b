#include "core/models/model.h"

#include "core/base/error.h"
#include "core/base/memory_room.h"

#include <algorithm>
#include <cstdio>

namespace headscope {

ModelInput Model::encode_text(std::string_view) const {
    throw Error(info().name + " takes images, not text (use --image)");
}

ModelInput Model::encode_image(const RgbImage&, const ImageOptions&) const {
    throw Error(info().name + " takes text, not images (use --text or --tokens)");
}

ModelInput Model::encode_ids(std::span<const std::int64_t>) const {
    throw Error(info().name + " takes images, not token ids (use --image)");
}

ModelInput Model::encode_text_after(std::string_view text, const ModelInput&) const { return encode_text(text); }

ModelInput Model::encode_ids_after(std::span<const std::int64_t> ids, const ModelInput&) const {
    return encode_ids(ids);
}

ModelInput Model::encode_label(std::string_view) const {
    throw Error(info().name + " scores no labels (--labels is for CLIP's image and text towers)");
}

ModelInput Model::encode_label_ids(std::span<const std::int64_t>) const {
    throw Error(info().name + " scores no labels (--label-tokens is for CLIP's image and text towers)");
}

ModelInput Model::encode_target_ids(const ModelInput&, std::span<const std::int64_t>) const {
    throw Error(info().name + " reads no target (a target is for encoder-decoder models: T5, BART)");
}

ModelInput Model::encode_target_text(const ModelInput&, std::string_view) const {
    throw Error(info().name + " reads no target (a target is for encoder-decoder models: T5, BART)");
}

std::string Model::output_label(Eigen::Index index) const { return std::to_string(index); }

Matrix Model::logits_rows(const ModelTrace& trace, Eigen::Index first, Eigen::Index n) const {
    const Eigen::Index T = std::max(trace.hidden.rows(), trace.logits.rows());
    const Eigen::Index kept_from = T - trace.logits.rows();   // the kept rows are the last ones
    if (n < 0 || first < kept_from || first + n > T) {
        throw Error(info().name + ": the run has no logits for positions " + std::to_string(first) + ".." +
                    std::to_string(first + n - 1));
    }
    return trace.logits.middleRows(first - kept_from, n);
}

Matrix Model::head_map(const ModelTrace& trace, Eigen::Index layer, Eigen::Index head) const {
    const auto L = static_cast<Eigen::Index>(trace.layers.size());
    if (layer < 0 || layer >= L) {
        throw Error("layer " + std::to_string(layer) + ": the run has layers 0.." + std::to_string(L - 1));
    }
    const AttentionTrace& kept = trace.layers[static_cast<std::size_t>(layer)];
    if (head < 0 || head >= static_cast<Eigen::Index>(kept.heads.size()) ||
        kept.heads[static_cast<std::size_t>(head)].weights.size() == 0) {
        throw Error(info().name + ": layer " + std::to_string(layer) + " head " + std::to_string(head) +
                    ": no map kept, and this model cannot compute one again");
    }
    return kept.heads[static_cast<std::size_t>(head)].weights;
}

AttentionTrace Model::layer_stages(const ModelTrace& /*trace*/, Eigen::Index layer, const HeadMask& /*disabled_heads*/,
                                   Eigen::Index /*only_head*/) const {
    throw Error(info().name + ": layer " + std::to_string(layer) + "'s stages cannot be computed again");
}

void check_maps_fit_in_memory(const ModelInfo& info, Eigen::Index T, int map_copies) {
    const double t = static_cast<double>(T);
    const double layers = static_cast<double>(info.n_layers), heads = static_cast<double>(info.n_heads);
    const double maps = layers * heads * t * t;
    // One layer's scores and weights while computed; the residual stream and a layer's
    // stages (norm, q, k, v, context, MLP hidden) as they pass.
    const double working =
        2.0 * heads * t * t + t * (8.0 * static_cast<double>(info.width) + 2.0 * static_cast<double>(info.mlp_width));
    const double bytes = (maps * map_copies + working) * sizeof(float);
    char what[160];
    std::snprintf(what, sizeof what, "%ld positions: %ld x %ld maps of %ld x %ld", static_cast<long>(T),
                  static_cast<long>(info.n_layers), static_cast<long>(info.n_heads), static_cast<long>(T),
                  static_cast<long>(T));
    check_memory_room(bytes, info.name + ": " + what + (map_copies > 1 ? " (kept, then written)" : ""),
                      "use a shorter input (images: --max-patches)");
}

void check_streamed_run_fits(const ModelInfo& info, Eigen::Index T, int threads, Eigen::Index logit_rows) {
    const double t = static_cast<double>(T);
    const double heads = static_cast<double>(info.n_heads), kv_heads = static_cast<double>(info.kv_heads());
    const double kept =
        static_cast<double>(info.n_layers) * t * (heads + kv_heads) * static_cast<double>(info.head_width);
    const double rows = info.classifier ? 1.0 : logit_rows >= 0 ? std::min(t, static_cast<double>(logit_rows)) : t;
    const double logits = static_cast<double>(info.n_outputs) * rows;
    const double working = 2.0 * static_cast<double>(threads) * t * t +
                           t * (8.0 * static_cast<double>(info.width) + 2.0 * static_cast<double>(info.mlp_width));
    char what[160];
    std::snprintf(what, sizeof what,
                  "%ld positions, maps streamed (each layer's queries and keys, a %ld x %ld map per thread)",
                  static_cast<long>(T), static_cast<long>(T), static_cast<long>(T));
    check_memory_room((kept + logits + working) * sizeof(float), info.name + ": " + what, "use a shorter input");
}

}   // namespace headscope
