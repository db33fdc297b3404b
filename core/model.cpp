#include "core/model.h"

#include "core/error.h"

#include <unistd.h>

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

std::string Model::output_label(Eigen::Index index) const { return std::to_string(index); }

void check_maps_fit_in_memory(const ModelInfo& info, Eigen::Index T) {
    const double bytes = static_cast<double>(info.n_layers) * static_cast<double>(info.n_heads) *
                         static_cast<double>(T) * static_cast<double>(T) * sizeof(float);
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return;   // unknown: let the allocator decide
    const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
    if (bytes > 0.75 * memory) {
        char text[160];
        std::snprintf(text, sizeof text, "%.1f GB for %ld x %ld maps of %ld x %ld, but this machine has %.1f GB",
                      bytes / 1e9, static_cast<long>(info.n_layers), static_cast<long>(info.n_heads),
                      static_cast<long>(T), static_cast<long>(T), memory / 1e9);
        throw Error(info.name + ": " + std::to_string(T) + " positions are too many to keep every head's map (" + text +
                    "); use a shorter input (images: --max-patches)");
    }
}

OptionalMask run_mask(const ModelInfo& info, const RunOptions& options, Eigen::Index T) {
    OptionalMask causal;
    if (options.causal.value_or(info.causal)) causal = mask_causal(T, T);
    return mask_and(causal, options.keep);
}

Eigen::Index resume_layers(const ModelInfo& info, const RunOptions& options, ModelTrace& trace, Matrix& x) {
    const ModelTrace* from = options.resume_from;
    if (from == nullptr) return 0;
    const Eigen::Index l = options.resume_layer;
    if (l < 0 || l >= info.n_layers) {
        throw Error(info.name + ": cannot resume at layer " + std::to_string(l) + ", the model has layers 0.." +
                    std::to_string(info.n_layers - 1));
    }
    if (static_cast<Eigen::Index>(from->layer_inputs.size()) != info.n_layers ||
        static_cast<Eigen::Index>(from->layers.size()) != info.n_layers || from->layer_inputs[l].rows() != x.rows() ||
        from->layer_inputs[l].cols() != x.cols()) {
        throw Error(info.name + ": the run to resume from did not keep every layer's input for this input");
    }
    const bool same_mask =
        from->mask.has_value() == trace.mask.has_value() &&
        (!trace.mask || (from->mask->rows() == trace.mask->rows() && from->mask->cols() == trace.mask->cols() &&
                         (*from->mask == *trace.mask).all()));
    if (!same_mask) throw Error(info.name + ": the run to resume from had another attention mask");
    for (Eigen::Index copied = 0; copied < l; ++copied) {
        if (detail_of(from->layers[static_cast<std::size_t>(copied)]) != options.detail_at(copied)) {
            throw Error(info.name + ": the run to resume from kept another detail at layer " + std::to_string(copied));
        }
    }
    trace.layers.assign(from->layers.begin(), from->layers.begin() + l);
    if (options.keep_layer_inputs)
        trace.layer_inputs.assign(from->layer_inputs.begin(), from->layer_inputs.begin() + l);
    x = from->layer_inputs[l];
    return l;
}

void note_layer_input(const RunOptions& options, ModelTrace& trace, const Matrix& x) {
    if (options.keep_layer_inputs) trace.layer_inputs.push_back(x);
}

void set_layer_options(const RunOptions& options, std::size_t l, AttentionOptions& attention) {
    attention.disabled_heads = options.disabled_heads.empty() ? std::vector<bool>{} : options.disabled_heads[l];
    attention.detail = options.detail_at(static_cast<Eigen::Index>(l));
    attention.keep_keys_values = options.keep_layer_inputs;
}

TraceDetail detail_of(const AttentionTrace& layer) {
    return !layer.heads.empty() && layer.heads[0].scores.size() != 0 ? TraceDetail::all_stages : TraceDetail::weights;
}

}   // namespace headscope
