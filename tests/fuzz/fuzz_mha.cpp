// Feeds: `headscope-cli mha` minus its command line (app/cli/mha_run.h: the same file
// reads, shape checks against one another, and per-batch attention). Byte 0 gives
// --heads (1..64), byte 1 the flags (--causal, --kv, --keep, --disable-heads); the
// rest is cut at "\n--8<--\n" into the weights, input, kv and keep .safetensors files
// and the --disable-heads list. Asserts: a headscope::Error, or outputs of exactly
// [B, H, Tq, Tk], [B, Tq, D], [B, Tq, E]; and when every input value is finite and
// small (|v| <= 1e3, so no score can overflow): every weight finite and in [0, 1], each
// row summing to 1 over its allowed keys (all 0 when none is allowed), pairs the causal
// or keep mask forbids exactly 0, a disabled head's context exactly 0, and the context
// and output finite.

#include "app/cli/mha_run.h"
#include "core/base/index_lists.h"
#include "core/models/mha/sequence_io.h"
#include "core/tensor/safetensors.h"
#include "fuzz_support.h"

#include <cmath>

using namespace headscope;
using namespace headscope::fuzz;

namespace {

// Small enough for the fuzzer's 2 GB; the command's own limit is 2^30 values.
constexpr double max_output_values = double(1 << 22);

// Every value of every tensor in the file is finite and at most 1e3 in size.
bool small_and_finite(const std::string& path) {
    const SafetensorsFile file = SafetensorsFile::open(path);
    for (const TensorView& t : file.tensors()) {
        for (float v : t.to_floats()) {
            if (!(std::abs(v) <= 1e3f)) return false;
        }
    }
    return true;
}

void check_result(const cli::MhaArgs& args, const cli::MhaResult& r, bool warned) {
    const auto [B, H, Tq, Tk, D, E] = std::tuple{r.B, r.H, r.Tq, r.Tk, r.D, r.E};
    require(B >= 1 && H == args.n_heads && Tq >= 1 && Tk >= 1 && D >= H && E >= 1, "output dimensions");
    require(r.weights.size() == static_cast<std::size_t>(B * H * Tq * Tk), "weights size");
    require(r.context.size() == static_cast<std::size_t>(B * Tq * D), "context size");
    require(r.output.size() == static_cast<std::size_t>(B * Tq * E), "output size");
    if (warned || !small_and_finite(args.weights_path) || !small_and_finite(args.input_path) ||
        (!args.kv_path.empty() && !small_and_finite(args.kv_path))) {
        return;   // NaN in, NaN out: the command warned, or huge values may overflow
    }
    std::vector<Mask> keep;
    if (!args.keep_path.empty()) keep = read_keep_masks(SafetensorsFile::open(args.keep_path), B, Tq, Tk);
    std::vector<bool> disabled(static_cast<std::size_t>(H), false);
    if (args.disable_heads_given) {
        for (std::int64_t h : parse_index_list("--disable-heads", args.disable_heads, "0")) {
            disabled[static_cast<std::size_t>(h)] = true;
        }
    }
    const Eigen::Index Dh = D / H;
    for (Eigen::Index b = 0; b < B; ++b) {
        for (Eigen::Index h = 0; h < H; ++h) {
            const float* w = r.weights.data() + (b * H + h) * Tq * Tk;
            for (Eigen::Index i = 0; i < Tq; ++i) {
                double sum = 0.0;
                bool any_allowed = false;
                for (Eigen::Index j = 0; j < Tk; ++j) {
                    const bool allowed =
                        (!args.causal || j <= i) && (keep.empty() || keep[static_cast<std::size_t>(b)](i, j));
                    const float v = w[i * Tk + j];
                    require(std::isfinite(v) && v >= 0.0f && v <= 1.0f, "a weight is NaN, Inf or outside [0, 1]");
                    require(allowed || v == 0.0f, "a masked pair has a nonzero weight");
                    any_allowed = any_allowed || allowed;
                    sum += v;
                }
                require(any_allowed ? std::abs(sum - 1.0) < 1e-3 : sum == 0.0, "a row does not sum to 1 (or 0)");
            }
            if (!disabled[static_cast<std::size_t>(h)]) continue;
            for (Eigen::Index i = 0; i < Tq; ++i) {
                for (Eigen::Index c = h * Dh; c < (h + 1) * Dh; ++c) {
                    require(r.context[static_cast<std::size_t>((b * Tq + i) * D + c)] == 0.0f,
                            "a disabled head has nonzero context");
                }
            }
        }
    }
    for (float v : r.context) require(std::isfinite(v), "non-finite context from small finite inputs");
    for (float v : r.output) require(std::isfinite(v), "non-finite output from small finite inputs");
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    cli::MhaArgs args;
    args.n_heads = 1 + (in.u8() & 63);
    const std::uint8_t flags = in.u8();
    const std::vector<std::string_view> parts = split_parts(in.rest(), 5);
    const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };

    ScratchDir& scratch = ScratchDir::get();
    scratch.fresh();
    args.weights_path = scratch.file("weights.safetensors");
    args.input_path = scratch.file("input.safetensors");
    write_file(args.weights_path, part(0));
    write_file(args.input_path, part(1));
    args.causal = (flags & 1) != 0;
    if (flags & 2) {
        args.kv_path = scratch.file("kv.safetensors");
        write_file(args.kv_path, part(2));
    }
    if (flags & 4) {
        args.keep_path = scratch.file("keep.safetensors");
        write_file(args.keep_path, part(3));
    }
    if (flags & 8) {
        args.disable_heads_given = true;
        args.disable_heads = std::string(part(4));
    }
    args.out_path = scratch.file("out.safetensors");   // never written: only the CLI writes

    run_expecting_errors([&] {
        bool warned = false;
        const cli::MhaResult r = cli::run_mha_layer(
            args, [&](const std::string&) { warned = true; }, max_output_values);
        check_result(args, r, warned);
    });
    return 0;
}
