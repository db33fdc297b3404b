#pragma once
// A layer's weight matrix [out, in] (PyTorch's layout, so y = x W^T + b), wherever its
// values live:
//   - owned: the demo models, tests, and checkpoints whose F16 / BF16 / F64 tensors
//     are converted to float once at load;
//   - a view into a memory-mapped checkpoint: F32, BF16 and F16 tensors are read in
//     place, never copied, so a 500 MB GPT-2 costs no second 500 MB of memory, and a
//     BF16 checkpoint keeps its 16-bit width (its panels too). A view may hold the
//     transpose ([in, out], as GPT-2's Conv1D stores it) and may be a slice of a
//     larger tensor (q, k and v cut from GPT-2's packed c_attn), its rows `stride`
//     floats apart. A shared owner (the mapped file, or a converted buffer) keeps the
//     memory alive for as long as any view of it exists.
// The products themselves run on a second copy laid out for them (core/tensor/kernels/weight_panels.h),
// made on a weight's first product and shared by its copies. For a view into a mapped
// file that copy replaces the file's pages: they are handed back to the kernel once
// copied (and read again from the page cache should anything else read them), so a
// checkpoint still costs its size once.

#include "core/tensor/dtype.h"
#include "core/tensor/kernels/weight_panels.h"
#include "core/tensor/matrix.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

namespace headscope {

class WeightMatrix {
public:
    // The values as they lie in memory: [rows, cols], or [cols, rows] when transposed().
    using Stored = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;

    WeightMatrix() = default;
    WeightMatrix(Matrix values);   // NOLINT(google-explicit-constructor): a Matrix is a weight
    template <typename Derived>
    WeightMatrix(const Eigen::MatrixBase<Derived>& values) : WeightMatrix(Matrix(values)) {}   // NOLINT

    // `stored_rows` x `stored_cols` floats at `data`, rows `row_stride` floats apart,
    // valid while `owner` lives. `transposed`: the memory holds [in, out]. `file_mapped`:
    // the memory is a read-only mapping of a file, whose pages may be dropped and read again.
    static WeightMatrix view(std::shared_ptr<const void> owner, const float* data, Eigen::Index stored_rows,
                             Eigen::Index stored_cols, Eigen::Index row_stride, bool transposed,
                             bool file_mapped = false);
    // The same over 16-bit values (`element`: BF16 or F16), `row_stride` elements apart.
    static WeightMatrix view(std::shared_ptr<const void> owner, const std::uint16_t* data, DType element,
                             Eigen::Index stored_rows, Eigen::Index stored_cols, Eigen::Index row_stride,
                             bool transposed, bool file_mapped = false);

    Eigen::Index rows() const { return rows_; }   // out
    Eigen::Index cols() const { return cols_; }   // in
    Eigen::Index size() const { return rows_ * cols_; }
    bool transposed() const { return transposed_; }
    bool is_view() const { return data_ != nullptr; }
    // How the values are stored: F32 (owned, or a view), BF16 or F16 (views).
    DType element() const { return element_; }

    // The stored floats; F32 weights only (throws headscope::Error for 16-bit ones).
    Stored stored() const;
    // The [out, in] values, copied (exports, tests).
    Matrix to_matrix() const;
    // Rows [first, first + n) of [out, in], sharing this one's memory when it is a view.
    WeightMatrix middle_rows(Eigen::Index first, Eigen::Index n) const;
    // Rows `ids` of [out, in], copied as [ids.size(), in]: an embedding lookup. In a mapped
    // file, reading one row maps the pages around it too (the kernel's fault-around: up to
    // 64 KB for GPT-2's 3 KB row), so 1,024 token ids put ~70 MB of wte back into RSS at
    // the peak of a forward; those pages are handed back once the rows are copied, as they
    // are once the panels are made. Throws headscope::Error for an id outside [0, out).
    Matrix gather_rows(std::span<const std::int64_t> ids) const;
    // The values to edit in place; only for owned weights (the demo models' init), and
    // only before their first product (the reference is not to be kept).
    Matrix& values();
    // The layout the products run on, made on first use (thread-safe).
    const WeightPanels& panels() const;

    // y = x W^T (+ bias, when given: [out])  ([T, in] -> [T, out]), whichever way the
    // memory holds W; on every compute thread (core/tensor/parallel.h), each writing its own
    // block of y.
    void multiply(const ConstMatrixRef& x, MatrixRef y, const Vector* bias = nullptr) const;
    // The same product, bit for bit, without making the panels when they are not made yet
    // and this is a view into a mapped file ([out, in] as stored): they are laid out a slab
    // of rows at a time, each slab's file pages handed back once it is laid out. For a
    // product of a few rows of a weight nothing else multiplies: a run that reads its last
    // row's logits then never holds a tied LM head of 128k rows (0.5 GB in BF16) besides
    // the file, at the cost of laying the slabs out again on every call.
    void multiply_streamed(const ConstMatrixRef& x, MatrixRef y) const;

    bool operator==(const WeightMatrix& other) const;

private:
    // Both views: `element` values (F32, BF16 or F16) at `data`, checked for their layout.
    static WeightMatrix typed_view(std::shared_ptr<const void> owner, const std::byte* data, DType element,
                                   Eigen::Index stored_rows, Eigen::Index stored_cols, Eigen::Index row_stride,
                                   bool transposed, bool file_mapped);
    // A mapped file's pages under this weight, handed back to the kernel (see panels()).
    void release_stored_pages() const;
    // Stored row r ([cols] when not transposed, else [rows]) as floats, into `out`.
    void read_stored_row(Eigen::Index r, std::span<float> out) const;
    Eigen::Index stored_rows() const { return transposed_ ? cols_ : rows_; }
    Eigen::Index stored_cols() const { return transposed_ ? rows_ : cols_; }
    const std::byte* stored_element(Eigen::Index r, Eigen::Index c) const;

    Matrix owned_;                        // [out, in] when owned
    std::shared_ptr<const void> owner_;   // views: what keeps `data_` valid
    const std::byte* data_ = nullptr;     // views: the first stored value
    DType element_ = DType::F32;          // views: F32, BF16 or F16
    Eigen::Index rows_ = 0;               // out
    Eigen::Index cols_ = 0;               // in
    Eigen::Index stride_ = 0;             // views: elements between stored rows
    bool transposed_ = false;
    bool file_mapped_ = false;
    // Made once, on the first product; copies share it (their values are the same).
    struct PanelCache {
        std::once_flag made;
        std::atomic<bool> ready = false;   // set once `panels` holds them
        WeightPanels panels;
    };
    std::shared_ptr<PanelCache> panels_ = std::make_shared<PanelCache>();
};

}   // namespace headscope
