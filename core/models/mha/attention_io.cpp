#include "core/models/mha/attention_io.h"

#include "core/base/error.h"

#include <set>
#include <string>
#include <vector>

namespace headscope {

namespace {

const std::set<std::string> torch_names = {"in_proj_weight", "in_proj_bias", "q_proj_weight", "k_proj_weight",
                                           "v_proj_weight"};
const std::set<std::string> separate_names = {"q_proj.weight", "q_proj.bias",   "k_proj.weight",
                                              "k_proj.bias",   "v_proj.weight", "v_proj.bias"};
const std::set<std::string> shared_names = {"out_proj.weight", "out_proj.bias"};

// Reads a floating tensor and checks its shape against `expected` (-1 = any size);
// `symbolic` spells the expected shape in dimension letters for the message.
Matrix read_checked(const SafetensorsFile& file, const std::string& name, const Shape& expected,
                    const std::string& symbolic) {
    const TensorView& view = file.get(name);
    const std::string where = file.path() + ": tensor '" + name + "'";
    if (!dtype_is_float(view.dtype)) {
        throw Error(where + ": expected a floating dtype (F32, F16, BF16, F64), got " +
                    std::string(dtype_name(view.dtype)));
    }
    bool matches = view.shape.size() == expected.size();
    for (std::size_t i = 0; matches && i < expected.size(); ++i) {
        matches = expected[i] < 0 || expected[i] == view.shape[i];
    }
    if (matches) {
        for (std::int64_t d : view.shape) matches = matches && d > 0;
    }
    if (!matches) {
        std::string known = "[";   // the expected shape in numbers, * where any size goes
        for (std::size_t i = 0; i < expected.size(); ++i) {
            known += (i ? ", " : "") + (expected[i] < 0 ? std::string("*") : std::to_string(expected[i]));
        }
        throw Error(where + ": expected shape " + symbolic + " = " + known + "], got " + shape_to_string(view.shape));
    }
    return file.matrix(name);
}

Vector read_bias(const SafetensorsFile& file, const std::string& name, std::int64_t size, const std::string& symbolic) {
    if (!file.contains(name)) return {};
    const Matrix row = read_checked(file, name, {size}, symbolic);
    return row.row(0).transpose();
}

Eigen::Index width_of(const SafetensorsFile& file, const std::string& name) {
    const TensorView& view = file.get(name);
    // Non-empty, so the width is bounded by the file's size: an empty [0, 2^61] would make
    // 3 * E overflow below.
    if (view.shape.size() != 2 || view.shape[0] < 1 || view.shape[1] < 1) {
        throw Error(file.path() + ": tensor '" + name + "': expected a non-empty matrix [out, in], got shape " +
                    shape_to_string(view.shape));
    }
    return view.shape[1];
}

LoadedAttention load_torch(const SafetensorsFile& file) {
    LoadedAttention loaded;
    AttentionWeights& w = loaded.weights;
    const bool packed = file.contains("in_proj_weight");
    const bool split =
        file.contains("q_proj_weight") || file.contains("k_proj_weight") || file.contains("v_proj_weight");
    if (packed && split) {
        throw Error(file.path() + ": holds both in_proj_weight and q/k/v_proj_weight: expected one of "
                                  "nn.MultiheadAttention's two layouts");
    }
    if (packed) {
        loaded.layout = AttentionLayout::torch_packed;
        const Eigen::Index E = width_of(file, "in_proj_weight");
        const Matrix in_proj = read_checked(file, "in_proj_weight", {3 * E, E}, "[3E, E]");
        w.q.weight = in_proj.topRows(E);
        w.k.weight = in_proj.middleRows(E, E);
        w.v.weight = in_proj.bottomRows(E);
        w.qkv.weight = in_proj;   // Q, K and V in one product
    } else {
        loaded.layout = AttentionLayout::torch_separate_kv;
        if (!split) {
            throw Error(file.path() +
                        ": no q/k/v projection weights: expected in_proj_weight [3E, E], or "
                        "q_proj_weight, k_proj_weight and v_proj_weight (nn.MultiheadAttention with kdim/vdim)");
        }
        for (const char* name : {"q_proj_weight", "k_proj_weight", "v_proj_weight"}) {
            if (!file.contains(name)) {
                throw Error(file.path() + ": no tensor '" + name +
                            "' (nn.MultiheadAttention with kdim/vdim "
                            "needs q_proj_weight, k_proj_weight and v_proj_weight)");
            }
        }
        const Eigen::Index E = width_of(file, "q_proj_weight");
        w.q.weight = read_checked(file, "q_proj_weight", {E, E}, "[E, E]");
        w.k.weight = read_checked(file, "k_proj_weight", {E, -1}, "[E, Ek]");
        w.v.weight = read_checked(file, "v_proj_weight", {E, -1}, "[E, Ev]");
    }
    const Eigen::Index E = w.q.weight.cols();
    if (file.contains("in_proj_bias")) {
        const Matrix bias = read_checked(file, "in_proj_bias", {3 * E}, "[3E]");
        w.q.bias = bias.row(0).segment(0, E).transpose();
        w.k.bias = bias.row(0).segment(E, E).transpose();
        w.v.bias = bias.row(0).segment(2 * E, E).transpose();
        if (w.qkv.weight.size() != 0) w.qkv.bias = bias.row(0).transpose();
    }
    if (!file.contains("out_proj.weight")) throw Error(file.path() + ": no tensor 'out_proj.weight'");
    w.out.weight = read_checked(file, "out_proj.weight", {E, E}, "[E, E]");
    w.out.bias = read_bias(file, "out_proj.bias", E, "[E]");
    return loaded;
}

LoadedAttention load_separate(const SafetensorsFile& file) {
    LoadedAttention loaded;
    loaded.layout = AttentionLayout::separate_projections;
    AttentionWeights& w = loaded.weights;
    for (const char* name : {"q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"}) {
        if (!file.contains(name)) {
            throw Error(file.path() + ": no tensor '" + name +
                        "' (separate projections need q_proj.weight, "
                        "k_proj.weight, v_proj.weight and out_proj.weight)");
        }
    }
    const Eigen::Index E = width_of(file, "q_proj.weight");
    const Eigen::Index D = file.get("q_proj.weight").shape[0];
    w.q.weight = read_checked(file, "q_proj.weight", {D, E}, "[D, E]");
    w.k.weight = read_checked(file, "k_proj.weight", {D, -1}, "[D, Ek]");
    w.v.weight = read_checked(file, "v_proj.weight", {D, -1}, "[D, Ev]");
    w.out.weight = read_checked(file, "out_proj.weight", {E, D}, "[E, D]");
    w.q.bias = read_bias(file, "q_proj.bias", D, "[D]");
    w.k.bias = read_bias(file, "k_proj.bias", D, "[D]");
    w.v.bias = read_bias(file, "v_proj.bias", D, "[D]");
    w.out.bias = read_bias(file, "out_proj.bias", E, "[E]");
    return loaded;
}

}   // namespace

LoadedAttention load_attention_weights(const SafetensorsFile& file, Eigen::Index n_heads) {
    bool any_torch = false;
    bool any_separate = false;
    for (const TensorView& t : file.tensors()) {
        if (torch_names.count(t.name)) {
            any_torch = true;
        } else if (separate_names.count(t.name)) {
            any_separate = true;
        } else if (!shared_names.count(t.name)) {
            throw Error(file.path() + ": unexpected tensor '" + t.name +
                        "' (expected nn.MultiheadAttention's in_proj_weight/in_proj_bias/out_proj.* or "
                        "q_proj/k_proj/v_proj/out_proj .weight/.bias)");
        }
    }
    if (any_torch && any_separate) {
        throw Error(file.path() + ": ambiguous weights: holds both nn.MultiheadAttention tensors (in_proj_*, "
                                  "*_proj_weight) and separate projections (*_proj.weight); expected one layout");
    }
    if (!any_torch && !any_separate) {
        throw Error(file.path() + ": no attention weights: expected in_proj_weight (nn.MultiheadAttention) "
                                  "or q_proj.weight, k_proj.weight, v_proj.weight (separate projections)");
    }
    LoadedAttention loaded = any_torch ? load_torch(file) : load_separate(file);
    loaded.weights.n_heads = n_heads;
    const Eigen::Index D = loaded.weights.inner_width();
    if (n_heads < 1) throw Error("number of heads must be at least 1, got " + std::to_string(n_heads));
    if (D % n_heads != 0) {
        throw Error(file.path() + ": inner width D = " + std::to_string(D) + " is not divisible by " +
                    std::to_string(n_heads) + " heads (head_dim = D / H must be whole)");
    }
    loaded.weights.validate();
    return loaded;
}

}   // namespace headscope
