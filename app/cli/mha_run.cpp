#include "app/cli/mha_run.h"

#include "core/base/error.h"
#include "core/base/index_lists.h"
#include "core/models/mha/attention_io.h"
#include "core/models/mha/sequence_io.h"
#include "core/tensor/safetensors.h"

#include <utility>

namespace headscope::cli {

namespace {

std::vector<bool> parse_disabled_heads(const std::string& list, bool given, Eigen::Index H) {
    std::vector<bool> disabled(static_cast<std::size_t>(H), false);
    if (!given) return disabled;
    for (std::int64_t head : parse_index_list("--disable-heads", list, "0,3")) {
        if (head >= H) {
            throw Error("--disable-heads: head " + std::to_string(head) + " does not exist (heads are 0.." +
                        std::to_string(H - 1) + ")");
        }
        disabled[static_cast<std::size_t>(head)] = true;
    }
    return disabled;
}

// The outputs are held in memory: refuse sizes this machine cannot hold, up front,
// with a message, rather than let the system's out-of-memory killer end the run.
void check_output_size(Eigen::Index B, Eigen::Index H, Eigen::Index Tq, Eigen::Index Tk, Eigen::Index D, Eigen::Index E,
                       double max_values) {
    const double values = double(B) * double(H) * double(Tq) * double(Tk) + double(B) * double(Tq) * double(D + E);
    if (values > max_values) {
        throw Error("output would hold " + std::to_string(static_cast<long long>(values)) +
                    " values (weights [B, H, Tq, Tk] = [" + std::to_string(B) + ", " + std::to_string(H) + ", " +
                    std::to_string(Tq) + ", " + std::to_string(Tk) +
                    "]), over the limit of 2^30; use shorter sequences");
    }
}

using Warn = std::function<void(const std::string&)>;

void warn_non_finite(const Warn& warn, const std::string& what, const ConstMatrixRef& m) {
    const Eigen::Index bad = m.size() - m.array().isFinite().count();
    if (bad > 0) warn(what + " holds " + std::to_string(bad) + " non-finite values (NaN or Inf)");
}

void warn_non_finite_weights(const Warn& warn, const std::string& path, const AttentionWeights& w) {
    const std::pair<const char*, const Linear*> layers[] = {{"q", &w.q}, {"k", &w.k}, {"v", &w.v}, {"out", &w.out}};
    for (const auto& [name, layer] : layers) {
        warn_non_finite(warn, path + ": " + name + " projection weight", layer->weight.to_matrix());
        if (layer->bias.size()) warn_non_finite(warn, path + ": " + name + " projection bias", layer->bias.transpose());
    }
}

// --kv: the keys' and values' sequences [B, Tk, Ek] (or one shared by the batch), checked
// against the weights and the input's batch size B. Without --kv (self-attention, an
// empty batch returned), k_proj and v_proj must take the input's width E.
SequenceBatch read_kv_batch(const MhaArgs& args, const AttentionWeights& weights, Eigen::Index B) {
    const Eigen::Index E = weights.model_width();
    const Eigen::Index Ek = weights.key_width();
    const Eigen::Index Ev = weights.value_width();
    SequenceBatch kv;
    if (!args.kv_path.empty()) {
        if (Ek != Ev) {
            throw Error(args.weights_path + ": k_proj takes width Ek = " + std::to_string(Ek) + " but v_proj Ev = " +
                        std::to_string(Ev) + "; --kv feeds keys and values from one tensor, so they must match");
        }
        const SafetensorsFile kv_file = SafetensorsFile::open(args.kv_path);
        kv = read_sequence_batch(kv_file, "x", "[B, Tk, Ek]");
        if (kv.items[0].cols() != Ek) {
            throw Error(args.kv_path + ": tensor 'x': expected width Ek = " + std::to_string(Ek) + " (from " +
                        args.weights_path + "), got shape " + shape_to_string(kv_file.get("x").shape));
        }
        if (!kv.shared && kv.n_batch != B) {
            throw Error(args.kv_path + ": tensor 'x': batch size " + std::to_string(kv.n_batch) +
                        " differs from the input's " + std::to_string(B) + " (from " + args.input_path + ")");
        }
    } else if (Ek != E || Ev != E) {
        throw Error(args.weights_path + ": k_proj/v_proj take width " + std::to_string(Ek) + "/" + std::to_string(Ev) +
                    " but self-attention feeds them the input of width E = " + std::to_string(E) +
                    "; pass --kv for cross-attention");
    }
    return kv;
}

}   // namespace

MhaResult run_mha_layer(const MhaArgs& args, const Warn& warn, double max_output_values) {
    const SafetensorsFile weights_file = SafetensorsFile::open(args.weights_path);
    const AttentionWeights weights = load_attention_weights(weights_file, args.n_heads).weights;
    const Eigen::Index H = weights.n_heads;
    const Eigen::Index E = weights.model_width();
    const Eigen::Index D = weights.inner_width();

    const SafetensorsFile input_file = SafetensorsFile::open(args.input_path);
    const SequenceBatch x = read_sequence_batch(input_file, "x", "[B, Tq, E]");
    const Eigen::Index B = x.n_batch;
    const Eigen::Index Tq = x.items[0].rows();
    if (x.items[0].cols() != E) {
        throw Error(args.input_path + ": tensor 'x': expected width E = " + std::to_string(E) + " (from " +
                    args.weights_path + "), got shape " + shape_to_string(input_file.get("x").shape));
    }

    const SequenceBatch kv = read_kv_batch(args, weights, B);
    const auto kv_item = [&](Eigen::Index b) -> const Matrix& {
        if (args.kv_path.empty()) return x.items[static_cast<std::size_t>(b)];
        return kv.items[kv.shared ? 0 : static_cast<std::size_t>(b)];
    };
    const Eigen::Index Tk = kv_item(0).rows();

    std::vector<Mask> keep;
    if (!args.keep_path.empty()) {
        const SafetensorsFile keep_file = SafetensorsFile::open(args.keep_path);
        keep = read_keep_masks(keep_file, B, Tq, Tk);
    }
    AttentionOptions options;
    options.disabled_heads = parse_disabled_heads(args.disable_heads, args.disable_heads_given, H);
    check_output_size(B, H, Tq, Tk, D, E, max_output_values);

    warn_non_finite_weights(warn, args.weights_path, weights);
    for (Eigen::Index b = 0; b < B; ++b) {
        warn_non_finite(warn, args.input_path + ": tensor 'x' (batch " + std::to_string(b) + ")",
                        x.items[static_cast<std::size_t>(b)]);
        if (!args.kv_path.empty() && (b == 0 || !kv.shared)) {
            warn_non_finite(warn, args.kv_path + ": tensor 'x' (batch " + std::to_string(b) + ")", kv_item(b));
        }
    }

    MhaResult result;
    result.B = B, result.H = H, result.Tq = Tq, result.Tk = Tk, result.D = D, result.E = E;
    result.weights.resize(static_cast<std::size_t>(B * H * Tq * Tk));
    result.context.resize(static_cast<std::size_t>(B * Tq * D));
    result.output.resize(static_cast<std::size_t>(B * Tq * E));
    for (Eigen::Index b = 0; b < B; ++b) {
        OptionalMask mask;
        if (args.causal) mask = mask_causal(Tq, Tk);
        if (!keep.empty()) mask = mask_and(mask, keep[static_cast<std::size_t>(b)]);
        options.keep = std::move(mask);

        const AttentionTrace trace =
            attention_forward(weights, x.items[static_cast<std::size_t>(b)], kv_item(b), options);
        for (Eigen::Index h = 0; h < H; ++h) {
            MatrixMap(result.weights.data() + (b * H + h) * Tq * Tk, Tq, Tk) =
                trace.heads[static_cast<std::size_t>(h)].weights;
        }
        MatrixMap(result.context.data() + b * Tq * D, Tq, D) = trace.concat;
        MatrixMap(result.output.data() + b * Tq * E, Tq, E) = trace.output;
    }
    return result;
}

}   // namespace headscope::cli
