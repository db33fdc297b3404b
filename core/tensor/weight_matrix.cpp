#include "core/tensor/weight_matrix.h"

#include "core/base/error.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace headscope {

namespace {

// Hands the whole pages of [begin, end) of a read-only file mapping back to the kernel:
// they leave this process's resident memory, and a later read faults them in again from
// the page cache (or the disk). Best effort: if the kernel declines, nothing changes.
void release_file_pages(const float* begin, const float* end) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    if (page == 0 || begin >= end) return;
    const auto first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
    const auto last = reinterpret_cast<std::uintptr_t>(end) / page * page;
    if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}   // namespace

WeightMatrix::WeightMatrix(Matrix values) : owned_(std::move(values)), rows_(owned_.rows()), cols_(owned_.cols()) {}

void WeightMatrix::release_stored_pages() const {
    if (data_ == nullptr || size() == 0) return;
    const Eigen::Index stored_rows = transposed_ ? cols_ : rows_;
    const Eigen::Index stored_cols = transposed_ ? rows_ : cols_;
    release_file_pages(data_, data_ + (stored_rows - 1) * stride_ + stored_cols);
}

WeightMatrix WeightMatrix::view(std::shared_ptr<const void> owner, const float* data, Eigen::Index stored_rows,
                                Eigen::Index stored_cols, Eigen::Index row_stride, bool transposed, bool file_mapped) {
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
    w.file_mapped_ = file_mapped;
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
    if (transposed_) return view(owner_, data_ + first, cols_, n, stride_, true, file_mapped_);
    return view(owner_, data_ + first * stride_, n, cols_, stride_, false, file_mapped_);
}

Matrix WeightMatrix::gather_rows(std::span<const std::int64_t> ids) const {
    Matrix rows(static_cast<Eigen::Index>(ids.size()), cols_);
    const Stored w = stored();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::int64_t id = ids[i];
        if (id < 0 || id >= rows_) {
            throw Error("weight rows: id " + std::to_string(id) + " outside [0, " + std::to_string(rows_) + ")");
        }
        const auto r = static_cast<Eigen::Index>(i);
        if (transposed_) {
            rows.row(r) = w.col(id).transpose();
        } else {
            rows.row(r) = w.row(id);
        }
    }
    if (file_mapped_ && !ids.empty()) release_stored_pages();
    return rows;
}

Matrix& WeightMatrix::values() {
    if (data_ != nullptr) throw Error("weight: a view into a checkpoint file cannot be edited");
    panels_ = std::make_shared<PanelCache>();   // copies made before keep the old values' panels
    return owned_;
}

const WeightPanels& WeightMatrix::panels() const {
    std::call_once(panels_->made, [this] {
        const Stored w = stored();
        panels_->panels = WeightPanels(w.data(), rows_, cols_, w.outerStride(), transposed_);
        if (file_mapped_) release_stored_pages();
    });
    return panels_->panels;
}

void WeightMatrix::multiply(const ConstMatrixRef& x, MatrixRef y, const Vector* bias) const {
    panels().multiply(x, y, bias);
}

bool WeightMatrix::operator==(const WeightMatrix& other) const {
    if (rows_ != other.rows_ || cols_ != other.cols_) return false;
    if (transposed_ == other.transposed_) return stored() == other.stored();
    return stored() == other.stored().transpose();
}

}   // namespace headscope
