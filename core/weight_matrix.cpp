#include "core/weight_matrix.h"

#include "core/error.h"
#include "core/gemm.h"
#include "core/parallel.h"

#include <algorithm>

#include <string>

namespace headscope {

WeightMatrix::WeightMatrix(Matrix values) : owned_(std::move(values)), rows_(owned_.rows()), cols_(owned_.cols()) {}

WeightMatrix WeightMatrix::view(std::shared_ptr<const void> owner, const float* data, Eigen::Index stored_rows,
                                Eigen::Index stored_cols, Eigen::Index row_stride, bool transposed) {
    if (data == nullptr || stored_rows < 0 || stored_cols < 0 || row_stride < stored_cols) {
        throw Error("weight view: bad layout [" + std::to_string(stored_rows) + ", " + std::to_string(stored_cols) +
                    "] with row stride " + std::to_string(row_stride));
    }
    WeightMatrix w;
    w.owner_ = std::move(owner);
    w.data_ = data;
    w.rows_ = transposed ? stored_cols : stored_rows;
    w.cols_ = transposed ? stored_rows : stored_cols;
    w.stride_ = row_stride;
    w.transposed_ = transposed;
    return w;
}

WeightMatrix::Stored WeightMatrix::stored() const {
    if (data_ == nullptr) return Stored(owned_.data(), rows_, cols_, Eigen::OuterStride<>(cols_));
    const Eigen::Index stored_rows = transposed_ ? cols_ : rows_;
    const Eigen::Index stored_cols = transposed_ ? rows_ : cols_;
    return Stored(data_, stored_rows, stored_cols, Eigen::OuterStride<>(stride_));
}

Matrix WeightMatrix::to_matrix() const {
    if (data_ == nullptr) return owned_;
    if (transposed_) return stored().transpose();
    return stored();
}

WeightMatrix WeightMatrix::middle_rows(Eigen::Index first, Eigen::Index n) const {
    if (first < 0 || n < 0 || first + n > rows_) {
        throw Error("weight rows [" + std::to_string(first) + ", " + std::to_string(first + n) + ") outside [0, " +
                    std::to_string(rows_) + ")");
    }
    if (data_ == nullptr) return WeightMatrix(Matrix(owned_.middleRows(first, n)));
    // A row of [out, in] is a stored row, or a stored column when the memory holds [in, out].
    if (transposed_) return view(owner_, data_ + first, cols_, n, stride_, true);
    return view(owner_, data_ + first * stride_, n, cols_, stride_, false);
}

Matrix& WeightMatrix::values() {
    if (data_ != nullptr) throw Error("weight: a view into a checkpoint file cannot be edited");
    return owned_;
}

void WeightMatrix::multiply(const ConstMatrixRef& x, MatrixRef y, const Vector* bias) const {
    const Eigen::Index T = x.rows();
    const Stored w = stored();
    // One block of y: rows [r, r + nr) x columns [c, c + nc).
    const auto block = [&](Eigen::Index r, Eigen::Index nr, Eigen::Index c, Eigen::Index nc) {
        auto out = y.block(r, c, nr, nc);
        // A bias is laid down first and the product added onto it: one pass over y, where
        // clearing it for the product and adding the bias after would be three.
        Output output = Output::overwrite;
        if (bias != nullptr) {
            out.rowwise() = bias->segment(c, nc).transpose();
            output = Output::accumulate;
        }
        if (transposed_) {
            gemm(1.0f, x.middleRows(r, nr), w.middleCols(c, nc), Transpose::no, out, output);   // the memory is W^T already
        } else {
            gemm(1.0f, x.middleRows(r, nr), w.middleRows(c, nc), Transpose::yes, out, output);
        }
    };
    const double flops = 2.0 * static_cast<double>(T) * static_cast<double>(rows_) * static_cast<double>(cols_);
    // Threads share the larger side: output columns (each reads all of x and its own
    // rows of W, in whole 16-float runs) or, for long inputs, rows of x.
    constexpr Eigen::Index run = 16;
    if (rows_ >= T) {
        const Eigen::Index runs = (rows_ + run - 1) / run;
        parallel_ranges(runs, flops, [&](Eigen::Index first, Eigen::Index last) {
            const Eigen::Index c = first * run;
            block(0, T, c, std::min(last * run, rows_) - c);
        });
    } else {
        parallel_ranges(T, flops, [&](Eigen::Index first, Eigen::Index last) { block(first, last - first, 0, rows_); });
    }
}

bool WeightMatrix::operator==(const WeightMatrix& other) const {
    if (rows_ != other.rows_ || cols_ != other.cols_) return false;
    if (transposed_ == other.transposed_) return stored() == other.stored();
    return stored() == other.stored().transpose();
}

} // namespace headscope
