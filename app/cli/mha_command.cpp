#include "app/cli/command.h"

#include "app/common/arg_lists.h"
#include "app/cli/cli_errors.h"
#include "core/attention_io.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "core/sequence_io.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace headscope::cli {

namespace {

struct MhaArgs {
    std::string weights_path;
    std::string input_path;
    std::string kv_path;
    std::string keep_path;
    std::string disable_heads;
    bool disable_heads_given = false;   // so that an explicitly empty list is an error
    std::string out_path;
    int n_heads = 0;
    bool causal = false;
};

std::vector<bool> parse_disabled_heads(const std::string& list, bool given, Eigen::Index H) {
    std::vector<bool> disabled(static_cast<std::size_t>(H), false);
    if (!given) return disabled;
    for (std::int64_t head : app::parse_index_list("--disable-heads", list, "0,3")) {
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
void check_output_size(Eigen::Index B, Eigen::Index H, Eigen::Index Tq, Eigen::Index Tk, Eigen::Index D,
                       Eigen::Index E) {
    constexpr double max_values = double(1 << 30);   // 4 GiB of float32
    const double values = double(B) * double(H) * double(Tq) * double(Tk) + double(B) * double(Tq) * double(D + E);
    if (values > max_values) {
        throw Error("output would hold " + std::to_string(static_cast<long long>(values)) +
                    " values (weights [B, H, Tq, Tk] = [" + std::to_string(B) + ", " + std::to_string(H) + ", " +
                    std::to_string(Tq) + ", " + std::to_string(Tk) + "]), over the limit of 2^30; use shorter sequences");
    }
}

void warn_non_finite(const std::string& what, const ConstMatrixRef& m) {
    const Eigen::Index bad = m.size() - m.array().isFinite().count();
    if (bad > 0) report_warning(what + " holds " + std::to_string(bad) + " non-finite values (NaN or Inf)");
}

void warn_non_finite_weights(const std::string& path, const AttentionWeights& w) {
    const std::pair<const char*, const Linear*> layers[] = {{"q", &w.q}, {"k", &w.k}, {"v", &w.v}, {"out", &w.out}};
    for (const auto& [name, layer] : layers) {
        warn_non_finite(path + ": " + name + " projection weight", layer->weight.to_matrix());
        if (layer->bias.size()) warn_non_finite(path + ": " + name + " projection bias", layer->bias.transpose());
    }
}

int run_mha(const MhaArgs& args) {
    const SafetensorsFile weights_file = SafetensorsFile::open(args.weights_path);
    const AttentionWeights weights = load_attention_weights(weights_file, args.n_heads).weights;
    const Eigen::Index H = weights.n_heads;
    const Eigen::Index E = weights.model_width();
    const Eigen::Index D = weights.inner_width();
    const Eigen::Index Ek = weights.key_width();
    const Eigen::Index Ev = weights.value_width();

    const SafetensorsFile input_file = SafetensorsFile::open(args.input_path);
    const SequenceBatch x = read_sequence_batch(input_file, "x", "[B, Tq, E]");
    const Eigen::Index B = x.n_batch;
    const Eigen::Index Tq = x.items[0].rows();
    if (x.items[0].cols() != E) {
        throw Error(args.input_path + ": tensor 'x': expected width E = " + std::to_string(E) + " (from " +
                    args.weights_path + "), got shape " + shape_to_string(input_file.get("x").shape));
    }

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
    check_output_size(B, H, Tq, Tk, D, E);

    warn_non_finite_weights(args.weights_path, weights);
    for (Eigen::Index b = 0; b < B; ++b) {
        warn_non_finite(args.input_path + ": tensor 'x' (batch " + std::to_string(b) + ")", x.items[static_cast<std::size_t>(b)]);
        if (!args.kv_path.empty() && (b == 0 || !kv.shared)) {
            warn_non_finite(args.kv_path + ": tensor 'x' (batch " + std::to_string(b) + ")", kv_item(b));
        }
    }

    // Outputs, row-major: weights [B, H, Tq, Tk], context [B, Tq, D], output [B, Tq, E].
    std::vector<float> all_weights(static_cast<std::size_t>(B * H * Tq * Tk));
    std::vector<float> all_context(static_cast<std::size_t>(B * Tq * D));
    std::vector<float> all_output(static_cast<std::size_t>(B * Tq * E));
    for (Eigen::Index b = 0; b < B; ++b) {
        OptionalMask mask;
        if (args.causal) mask = mask_causal(Tq, Tk);
        if (!keep.empty()) mask = mask_and(mask, keep[static_cast<std::size_t>(b)]);
        options.keep = std::move(mask);

        const AttentionTrace trace = attention_forward(weights, x.items[static_cast<std::size_t>(b)], kv_item(b), options);
        for (Eigen::Index h = 0; h < H; ++h) {
            MatrixMap(all_weights.data() + (b * H + h) * Tq * Tk, Tq, Tk) = trace.heads[static_cast<std::size_t>(h)].weights;
        }
        MatrixMap(all_context.data() + b * Tq * D, Tq, D) = trace.concat;
        MatrixMap(all_output.data() + b * Tq * E, Tq, E) = trace.output;
    }

    write_safetensors(args.out_path, {
        tensor_f32("weights", {B, H, Tq, Tk}, all_weights),
        tensor_f32("context", {B, Tq, D}, all_context),
        tensor_f32("output", {B, Tq, E}, all_output),
    });
    std::printf("wrote %s: weights [%ld, %ld, %ld, %ld], context [%ld, %ld, %ld], output [%ld, %ld, %ld]\n",
                args.out_path.c_str(), long(B), long(H), long(Tq), long(Tk), long(B), long(Tq), long(D), long(B),
                long(Tq), long(E));
    return 0;
}

} // namespace

Command add_mha_command(CLI::App& app) {
    auto args = std::make_shared<MhaArgs>();
    CLI::App* cmd = app.add_subcommand("mha", "Run one multi-head attention layer on tensors from files");
    cmd->add_option("--weights", args->weights_path,
                    "Weights .safetensors: nn.MultiheadAttention state dict (in_proj_weight [3E, E], or "
                    "q/k/v_proj_weight with kdim/vdim) or separate q_proj/k_proj/v_proj/out_proj .weight/.bias")
        ->required();
    cmd->add_option("--input", args->input_path, "Queries .safetensors: tensor 'x' [B, Tq, E] or [Tq, E]")->required();
    cmd->add_option("--heads", args->n_heads, "Number of heads H (head_dim = D / H)")->required();
    cmd->add_option("--kv", args->kv_path,
                    "Keys/values .safetensors for cross-attention: tensor 'x' [B, Tk, Ek] or [Tk, Ek] "
                    "(default: self-attention on --input)");
    cmd->add_flag("--causal", args->causal, "Causal mask: key j allowed for query i iff j <= i");
    cmd->add_option("--keep", args->keep_path,
                    "Keep-mask .safetensors: tensor 'keep' [Tq, Tk] or [B, Tq, Tk], nonzero = allowed "
                    "(ANDed with --causal)");
    CLI::Option* disable_option = cmd->add_option("--disable-heads", args->disable_heads,
                    "Comma-separated heads whose context is zeroed (ablation), e.g. 0,3");
    cmd->add_option("--out", args->out_path,
                    "Output .safetensors (F32): weights [B, H, Tq, Tk], context [B, Tq, D], output [B, Tq, E]")
        ->required();
    cmd->footer("A query row with no allowed key gets weights 0 and context 0. Exit 0 on success; exit 2 with one "
                "line on stderr on bad input, leaving any existing output file untouched.");
    return {cmd, [args, disable_option]() {
                args->disable_heads_given = disable_option->count() > 0;
                return run_mha(*args);
            }};
}

} // namespace headscope::cli
