#pragma once
// The work of `headscope-cli mha` without its command line and its output file: read the
// weights, input, kv and keep files, check every shape against the others, and run the
// attention layer on each batch element. headscope-cli mha writes what it returns;
// tests/fuzz/fuzz_mha.cpp feeds it files built from fuzz input, through the same checks.

#include "core/tensor/matrix.h"

#include <functional>
#include <string>
#include <vector>

namespace headscope::cli {

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

// Outputs, row-major: weights [B, H, Tq, Tk], context [B, Tq, D], output [B, Tq, E].
struct MhaResult {
    Eigen::Index B = 0, H = 0, Tq = 0, Tk = 0, D = 0, E = 0;
    std::vector<float> weights;
    std::vector<float> context;
    std::vector<float> output;
};

// The most values the outputs may hold (4 GiB of float32): larger runs are refused up
// front, with a message, rather than ended by the out-of-memory killer.
inline constexpr double mha_max_output_values = double(1 << 30);

// Throws headscope::Error on bad input. `warn` receives one line per input holding
// NaN or Inf (the run goes on). `max_output_values` is for the fuzzer's memory limit.
MhaResult run_mha_layer(const MhaArgs& args, const std::function<void(const std::string&)>& warn,
                        double max_output_values = mha_max_output_values);

}   // namespace headscope::cli
