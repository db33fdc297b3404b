#include "core/models/mha/sequence_io.h"

#include "core/base/error.h"

#include <cmath>

namespace headscope {

SequenceBatch read_sequence_batch(const SafetensorsFile& file, const std::string& name, const char* symbolic) {
    const TensorView& view = file.get(name);
    const std::string where = file.path() + ": tensor '" + name + "'";
    if (!dtype_is_float(view.dtype)) {
        throw Error(where + ": expected a floating dtype (F32, F16, BF16, F64), got " +
                    std::string(dtype_name(view.dtype)));
    }
    if (view.shape.size() != 2 && view.shape.size() != 3) {
        throw Error(where + ": expected shape " + symbolic + " or its 2-D form without B, got " +
                    shape_to_string(view.shape));
    }
    for (std::int64_t d : view.shape) {
        if (d == 0) throw Error(where + ": shape " + shape_to_string(view.shape) + " has an empty dimension");
    }
    const bool batched = view.shape.size() == 3;
    SequenceBatch seqs;
    seqs.n_batch = batched ? view.shape[0] : 1;
    seqs.shared = !batched;
    const Eigen::Index T = view.shape[view.shape.size() - 2];
    const Eigen::Index C = view.shape.back();
    const std::vector<float> values = view.to_floats();
    for (Eigen::Index b = 0; b < seqs.n_batch; ++b) {
        seqs.items.emplace_back(ConstMatrixMap(values.data() + b * T * C, T, C));
    }
    return seqs;
}

// The keep mask for each batch element ([Tq, Tk] shared, or [B, Tq, Tk]).
std::vector<Mask> read_keep_masks(const SafetensorsFile& file, Eigen::Index B, Eigen::Index Tq, Eigen::Index Tk) {
    const TensorView& view = file.get("keep");
    const std::string where = file.path() + ": tensor 'keep'";
    const Shape shared_shape{Tq, Tk};
    const Shape batched_shape{B, Tq, Tk};
    if (view.shape != shared_shape && view.shape != batched_shape) {
        throw Error(where + ": expected shape [Tq, Tk] = " + shape_to_string(shared_shape) +
                    " or [B, Tq, Tk] = " + shape_to_string(batched_shape) + ", got " + shape_to_string(view.shape));
    }
    // Nonzero = allowed, decided on the stored values (core/tensor/dtype.h), any dtype.
    std::vector<Mask> masks;
    const bool batched = view.shape.size() == 3;
    const std::size_t cells = static_cast<std::size_t>(Tq * Tk);
    for (Eigen::Index b = 0; b < B; ++b) {
        const std::size_t offset = batched ? static_cast<std::size_t>(b) * cells * dtype_size(view.dtype) : 0;
        Mask mask(Tq, Tk);
        convert_to_nonzero(view.dtype, view.bytes.data() + offset, std::span<bool>(mask.data(), cells));
        masks.push_back(std::move(mask));
    }
    return masks;
}

}   // namespace headscope
