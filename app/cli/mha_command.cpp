#include "app/cli/command.h"

#include "app/cli/cli_errors.h"
#include "app/cli/mha_run.h"
#include "core/base/output_file.h"
#include "core/tensor/safetensors.h"

#include <cstdio>
#include <memory>

namespace headscope::cli {

namespace {

int run_mha(const MhaArgs& args, Warnings& warnings) {
    const InputPath inputs[] = {
        {"--weights", args.weights_path, false},
        {"--input", args.input_path, false},
        {"--kv", args.kv_path, false},
        {"--keep", args.keep_path, false},
    };
    check_output("--out", args.out_path, inputs);
    const MhaResult r = run_mha_layer(args, [&](const std::string& message) { warnings.add(message); });
    write_safetensors(args.out_path, {
                                         tensor_f32("weights", {r.B, r.H, r.Tq, r.Tk}, r.weights),
                                         tensor_f32("context", {r.B, r.Tq, r.D}, r.context),
                                         tensor_f32("output", {r.B, r.Tq, r.E}, r.output),
                                     });
    std::printf("wrote %s: weights [%ld, %ld, %ld, %ld], context [%ld, %ld, %ld], output [%ld, %ld, %ld]\n",
                args.out_path.c_str(), long(r.B), long(r.H), long(r.Tq), long(r.Tk), long(r.B), long(r.Tq), long(r.D),
                long(r.B), long(r.Tq), long(r.E));
    return 0;
}

}   // namespace

Command add_mha_command(CLI::App& app) {
    auto args = std::make_shared<MhaArgs>();
    CLI::App* cmd = app.add_subcommand("mha", "Run one multi-head attention layer on tensors from files");
    cmd->add_option("--weights", args->weights_path,
                    "Weights .safetensors: nn.MultiheadAttention state dict (in_proj_weight [3E, E], or "
                    "q/k/v_proj_weight with kdim/vdim) or separate q_proj/k_proj/v_proj/out_proj .weight/.bias")
        ->required();
    cmd->add_option("--input", args->input_path, "Queries .safetensors: tensor 'x' [B, Tq, E] or [Tq, E]")->required();
    cmd->add_option("--heads", args->n_heads, "Number of heads H (head_dim = D / H)")
        ->required()
        ->check(CLI::Range(1, 4096));
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
    return {cmd, [args, disable_option](Warnings& warnings) {
                args->disable_heads_given = disable_option->count() > 0;
                return run_mha(*args, warnings);
            }};
}

}   // namespace headscope::cli
