#pragma once
// A family's tensors, listed once. Each family writes one function template
//
//     template <typename Weights, typename Binder>
//     void bind_tensors(Weights& w, const Config& c, Binder& b)   // Weights: const for export
//
// that names every tensor it has (b.weight("wte.weight", w.wte, V, E, why), bind_linear,
// bind_norm, ...) with the shape the config gives. The same list then drives loading (a
// checkpoint's HfTensorLoader, core/models/hf/tensors.h), export (TensorExporter) and the
// parameter count (ParameterCounter), so a tensor's name is written in one place.
//
// A binder has: present(name, held) -> bool (optional tensors: in the file when loading,
// held when exporting or counting); weight / transposed_weight (a Conv1D's, stored
// [in, out]) / matrix / vector, each (name, value, sizes, why[, stored shape]).

#include "core/nn/attention.h"
#include "core/nn/norm.h"
#include "core/tensor/owned_tensor.h"
#include "core/tensor/weight_matrix.h"

#include <cstdint>
#include <string>
#include <vector>

namespace headscope {

// A Linear as NAME.weight [out, in] and, when `bias`, NAME.bias [out].
template <typename Binder, typename LinearT>
void bind_linear(Binder& b, const std::string& prefix, LinearT& linear, Eigen::Index out, Eigen::Index in,
                 const std::string& why, bool bias = true) {
    b.weight(prefix + ".weight", linear.weight, out, in, why);
    if (bias) b.vector(prefix + ".bias", linear.bias, out, why);
}

// Rows [first, first + n) of a bound Linear, as a view of it (no copy): a packed tensor's
// parts (q/k/v in one qkv, gate and up in one gate_up).
inline Linear linear_rows(const Linear& l, Eigen::Index first, Eigen::Index n) {
    Linear part;
    part.weight = l.weight.middle_rows(first, n);
    if (l.bias.size() != 0) part.bias = l.bias.segment(first, n);
    return part;
}

// GPT-2's Conv1D: NAME.weight stored [in, out], held as a Linear [out, in]; NAME.bias [out].
template <typename Binder, typename LinearT>
void bind_conv1d(Binder& b, const std::string& prefix, LinearT& linear, Eigen::Index in, Eigen::Index out,
                 const std::string& why) {
    b.transposed_weight(prefix + ".weight", linear.weight, out, in, why);
    b.vector(prefix + ".bias", linear.bias, out, why);
}

// A norm of width n: NAME.weight, and NAME.bias for a Norm with `bias`. Its kind and
// eps come from the family's config, set before binding.
template <typename Binder, typename NormT>
void bind_norm(Binder& b, const std::string& prefix, NormT& norm, Eigen::Index n, const std::string& why,
               bool bias = true) {
    b.vector(prefix + ".weight", norm.weight, n, why);
    if (bias && norm.kind == NormKind::layer_norm) b.vector(prefix + ".bias", norm.bias, n, why);
}

// Row r of a weight held in another order than stored: stored row `stored_row[r]` (GPT-NeoX
// keeps each head's q, k and v rows together; the model holds all q rows, then k, then v).
using RowOrder = std::vector<Eigen::Index>;

// Writes each tensor as float32 under its name and stored shape (Model::export_weights).
class TensorExporter {
public:
    bool present(const std::string&, bool held) const { return held; }
    void weight(const std::string& name, const WeightMatrix& w, Eigen::Index, Eigen::Index, const std::string&,
                Shape stored = {}) {
        out_.push_back(owned_tensor(name, w.to_matrix(), std::move(stored)));
    }
    void transposed_weight(const std::string& name, const WeightMatrix& w, Eigen::Index, Eigen::Index,
                           const std::string&) {
        out_.push_back(owned_tensor(name, Matrix(w.to_matrix().transpose())));
    }
    void matrix(const std::string& name, const Matrix& m, Eigen::Index, Eigen::Index, const std::string&,
                Shape stored = {}) {
        out_.push_back(owned_tensor(name, m, std::move(stored)));
    }
    void vector(const std::string& name, const Vector& v, Eigen::Index, const std::string&, Shape stored = {}) {
        out_.push_back(owned_tensor(name, v, std::move(stored)));
    }
    void permuted_weight(const std::string& name, const WeightMatrix& w, Eigen::Index, Eigen::Index, const std::string&,
                         const RowOrder& stored_row) {
        const Matrix held = w.to_matrix();
        Matrix stored(held.rows(), held.cols());
        for (Eigen::Index r = 0; r < held.rows(); ++r)
            stored.row(stored_row[static_cast<std::size_t>(r)]) = held.row(r);
        out_.push_back(owned_tensor(name, stored));
    }
    void permuted_vector(const std::string& name, const Vector& v, Eigen::Index, const std::string&,
                         const RowOrder& stored_row) {
        Vector stored(v.size());
        for (Eigen::Index r = 0; r < v.size(); ++r) stored(stored_row[static_cast<std::size_t>(r)]) = v(r);
        out_.push_back(owned_tensor(name, stored));
    }
    // A 0-dimensional tensor (shape []), as CLIP stores logit_scale.
    void scalar(const std::string& name, float value, const std::string&) { out_.push_back({name, {}, {value}}); }
    std::vector<OwnedTensor> take() { return std::move(out_); }

private:
    std::vector<OwnedTensor> out_;
};

// Counts the values of every tensor held (ModelInfo::n_parameters).
class ParameterCounter {
public:
    bool present(const std::string&, bool held) const { return held; }
    void weight(const std::string&, const WeightMatrix& w, Eigen::Index, Eigen::Index, const std::string&,
                const Shape& = {}) {
        n_ += w.size();
    }
    void transposed_weight(const std::string&, const WeightMatrix& w, Eigen::Index, Eigen::Index, const std::string&) {
        n_ += w.size();
    }
    void matrix(const std::string&, const Matrix& m, Eigen::Index, Eigen::Index, const std::string&,
                const Shape& = {}) {
        n_ += m.size();
    }
    void vector(const std::string&, const Vector& v, Eigen::Index, const std::string&, const Shape& = {}) {
        n_ += v.size();
    }
    void permuted_weight(const std::string&, const WeightMatrix& w, Eigen::Index, Eigen::Index, const std::string&,
                         const RowOrder&) {
        n_ += w.size();
    }
    void permuted_vector(const std::string&, const Vector& v, Eigen::Index, const std::string&, const RowOrder&) {
        n_ += v.size();
    }
    void scalar(const std::string&, float, const std::string&) { ++n_; }
    std::int64_t count() const { return n_; }

private:
    std::int64_t n_ = 0;
};

}   // namespace headscope
