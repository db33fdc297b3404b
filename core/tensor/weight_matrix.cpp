#include "core/tensor/weight_matrix.h"

#include "core/base/error.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace headscope {

namespace {

// Hands the whole pages of [begin, end) of a read-only file mapping back to the kernel:
// they leave this process's resident memory, and a later read faults them in again from
// the page cache (or the disk). Best effort: if the kernel declines, nothing changes.
void release_file_pages(const std::byte* begin, const std::byte* end) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    if (page == 0 || begin >= end) return;
    const auto first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
    const auto last = reinterpret_cast<std::uintptr_t>(end) / page * page;
    if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}   // namespace

WeightMatrix::WeightMatrix(Matrix values) : owned_(std::move(values)), rows_(owned_.rows()), cols_(owned_.cols()) {}

const std::byte* WeightMatrix::stored_element(Eigen::Index r, Eigen::Index c) const {
    return data_ + (r * stride_ + c) * static_cast<Eigen::Index>(dtype_size(element_));
}

void WeightMatrix::release_stored_pages() const {
    if (data_ == nullptr || size() == 0) return;
    release_file_pages(data_, stored_element(stored_rows() - 1, stored_cols()));
}

void WeightMatrix::read_stored_row(Eigen::Index r, std::span<float> out) const {
    convert_to_float(element_, stored_element(r, 0), out);
}

WeightMatrix WeightMatrix::typed_view(std::shared_ptr<const void> owner, const std::byte* data, DType element,
                                      Eigen::Index stored_rows, Eigen::Index stored_cols, Eigen::Index row_stride,
                                      bool transposed, bool file_mapped) {
    if (data == nullptr || stored_rows < 0 || stored_cols < 0 || row_stride < stored_cols) {
        throw Error("weight view: bad layout [" + std::to_string(stored_rows) + ", " + std::to_string(stored_cols) +
                    "] with row stride " + std::to_string(row_stride));
    }
    WeightMatrix w;
    w.owner_ = std::move(owner);
    w.data_ = data;
    w.element_ = element;
    w.rows_ = transposed ? stored_cols : stored_rows;
    w.cols_ = transposed ? stored_rows : stored_cols;
    w.stride_ = row_stride;
    w.transposed_ = transposed;
    w.file_mapped_ = file_mapped;
    return w;
}

WeightMatrix WeightMatrix::view(std::shared_ptr<const void> owner, const float* data, Eigen::Index stored_rows,
                                Eigen::Index stored_cols, Eigen::Index row_stride, bool transposed, bool file_mapped) {
    return typed_view(std::move(owner), reinterpret_cast<const std::byte*>(data), DType::F32, stored_rows, stored_cols,
                      row_stride, transposed, file_mapped);
}

WeightMatrix WeightMatrix::view(std::shared_ptr<const void> owner, const std::uint16_t* data, DType element,
                                Eigen::Index stored_rows, Eigen::Index stored_cols, Eigen::Index row_stride,
                                bool transposed, bool file_mapped) {
    if (element != DType::BF16 && element != DType::F16) {
        throw Error("weight view: " + std::string(dtype_name(element)) + " values (BF16 or F16 expected)");
    }
    return typed_view(std::move(owner), reinterpret_cast<const std::byte*>(data), element, stored_rows, stored_cols,
                      row_stride, transposed, file_mapped);
}

WeightMatrix::Stored WeightMatrix::stored() const {
    if (data_ == nullptr) return Stored(owned_.data(), rows_, cols_, Eigen::OuterStride<>(cols_));
    if (element_ != DType::F32) {
        throw Error("weight: stored as " + std::string(dtype_name(element_)) + ", not as float");
    }
    return Stored(reinterpret_cast<const float*>(data_), stored_rows(), stored_cols(), Eigen::OuterStride<>(stride_));
}

Matrix WeightMatrix::to_matrix() const {
    if (data_ == nullptr) return owned_;
    if (element_ == DType::F32) {
        if (transposed_) return stored().transpose();
        return stored();
    }
    Matrix as_stored(stored_rows(), stored_cols());
    for (Eigen::Index r = 0; r < as_stored.rows(); ++r) {
        read_stored_row(r, std::span(as_stored.row(r).data(), static_cast<std::size_t>(as_stored.cols())));
    }
    if (transposed_) return as_stored.transpose();
    return as_stored;
}

WeightMatrix WeightMatrix::middle_rows(Eigen::Index first, Eigen::Index n) const {
    if (first < 0 || n < 0 || first + n > rows_) {
        throw Error("weight rows [" + std::to_string(first) + ", " + std::to_string(first + n) + ") outside [0, " +
                    std::to_string(rows_) + ")");
    }
    if (data_ == nullptr) return WeightMatrix(Matrix(owned_.middleRows(first, n)));
    // A row of [out, in] is a stored row, or a stored column when the memory holds [in, out].
    if (transposed_)
        return typed_view(owner_, stored_element(0, first), element_, cols_, n, stride_, true, file_mapped_);
    return typed_view(owner_, stored_element(first, 0), element_, n, cols_, stride_, false, file_mapped_);
}

Matrix WeightMatrix::gather_rows(std::span<const std::int64_t> ids) const {
    Matrix rows(static_cast<Eigen::Index>(ids.size()), cols_);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::int64_t id = ids[i];
        if (id < 0 || id >= rows_) {
            throw Error("weight rows: id " + std::to_string(id) + " outside [0, " + std::to_string(rows_) + ")");
        }
        const auto r = static_cast<Eigen::Index>(i);
        if (data_ == nullptr) {
            rows.row(r) = owned_.row(id);
        } else if (!transposed_) {
            read_stored_row(id, std::span(rows.row(r).data(), static_cast<std::size_t>(cols_)));
        } else {
            // A row of [out, in] is a stored column: one value from each stored row.
            for (Eigen::Index k = 0; k < cols_; ++k) {
                convert_to_float(element_, stored_element(k, id), std::span(&rows(r, k), 1));
            }
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
        // A mapped file's rows go back to the kernel as soon as they are laid out, so a
        // weight costs its size once, not twice, while its panels are made (a tied LM head
        // of 128k rows: 0.5 GB).
        WeightPanels::RowsLaidOut laid_out;
        if (file_mapped_) {
            laid_out = [this](Eigen::Index first, Eigen::Index last) {
                if (last > first) release_file_pages(stored_element(first, 0), stored_element(last - 1, stored_cols()));
            };
        }
        if (data_ != nullptr && element_ != DType::F32) {
            panels_->panels = WeightPanels(reinterpret_cast<const std::uint16_t*>(data_), element_, rows_, cols_,
                                           stride_, transposed_, laid_out);
        } else {
            const Stored w = stored();
            panels_->panels = WeightPanels(w.data(), rows_, cols_, w.outerStride(), transposed_, laid_out);
        }
        if (file_mapped_) release_stored_pages();
        panels_->ready = true;
    });
    return panels_->panels;
}

void WeightMatrix::multiply_streamed(const ConstMatrixRef& x, MatrixRef y) const {
    if (panels_->ready || !file_mapped_ || transposed_) {
        multiply(x, y);
        return;
    }
    // Slabs of whole panels, each wide enough that its product packs x as the whole
    // weight's does (WeightPanels: 16 panels or more), so every output is the same sum in
    // the same order; a short last slab joins the one before it.
    constexpr Eigen::Index slab_rows = 4096;
    constexpr Eigen::Index min_slab_rows = 16 * WeightPanels::panel_width;
    for (Eigen::Index first = 0; first < rows_;) {
        Eigen::Index n = std::min(slab_rows, rows_ - first);
        if (rows_ - first - n < min_slab_rows) n = rows_ - first;
        const WeightPanels slab =
            element_ == DType::F32
                ? WeightPanels(reinterpret_cast<const float*>(stored_element(first, 0)), n, cols_, stride_, false)
                : WeightPanels(reinterpret_cast<const std::uint16_t*>(stored_element(first, 0)), element_, n, cols_,
                               stride_, false);
        release_file_pages(stored_element(first, 0), stored_element(first + n - 1, cols_));
        slab.multiply(x, y.middleCols(first, n));
        first += n;
    }
}

void WeightMatrix::multiply(const ConstMatrixRef& x, MatrixRef y, const Vector* bias) const {
    panels().multiply(x, y, bias);
}

bool WeightMatrix::operator==(const WeightMatrix& other) const {
    if (rows_ != other.rows_ || cols_ != other.cols_) return false;
    if (transposed_ != other.transposed_) return to_matrix() == other.to_matrix();
    // Stored row by stored row, as floats: a tied head checked against its embedding
    // (both 16-bit, hundreds of MB) never needs either whole as float.
    std::vector<float> mine(static_cast<std::size_t>(stored_cols()));
    std::vector<float> theirs(mine.size());
    bool equal = true;
    for (Eigen::Index r = 0; r < stored_rows() && equal; ++r) {
        if (data_ == nullptr) {
            std::copy_n(owned_.row(r).data(), mine.size(), mine.begin());   // owned: never transposed
        } else {
            read_stored_row(r, mine);
        }
        if (other.data_ == nullptr) {
            std::copy_n(other.owned_.row(r).data(), theirs.size(), theirs.begin());
        } else {
            other.read_stored_row(r, theirs);
        }
        equal = mine == theirs;
    }
    if (file_mapped_) release_stored_pages();
    if (other.file_mapped_) other.release_stored_pages();
    return equal;
}

}   // namespace headscope
