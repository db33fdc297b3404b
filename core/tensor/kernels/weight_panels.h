#pragma once
// A weight matrix [out, in] laid out for the products of a forward pass, once, so that no
// forward packs it again. A BLAS packs both sides of every product into its own layout
// before it computes; for y = x W^T the weights are by far the larger side (ViT-B/16:
// 340 MB per forward against a few MB of activations), and re-packing them every time
// measured 12% of a forward. Here W is re-laid once, into panels of 16 output columns,
// each panel [in][16]: the 16 weights a step of the product needs are one contiguous
// 64-byte run, and a panel is read front to back.
//
// The product is a 6 x 16 register tile (12 AVX2 accumulators, as BLIS and OpenBLAS use
// on this kind of core), or with AVX-512 a 6 x 32 tile over two neighbouring panels.
// Where 16 panels or more read x, x is first packed 6 rows at a time ([in][6]), so a
// tile reads two sequential streams over all its inputs; otherwise x is read where it
// lies, over blocks of 384 inputs that keep a panel's block in L1.
// A checkpoint's BF16 and F16 weights keep their width in the panels (half the memory of
// float, read at half the bandwidth) and are widened to float as a tile reads them: BF16
// by moving its bits to the top of a float, F16 by F16C's conversion, both exact, so their
// products are bit for bit those of the values converted first. The arithmetic and the
// sums are float either way.
// Threads take pieces of the output as they come free, rather than fixed halves: on a
// shared machine one core is often slower than the other.

#include "core/tensor/dtype.h"
#include "core/tensor/matrix.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace headscope {

class WeightPanels {
public:
    static constexpr Eigen::Index panel_width = 16;   // output columns per panel

    // Told, as a layout of [out, in] values proceeds, that stored rows [first, last) are
    // laid out and will not be read again (a mapped file's pages can go back as it runs).
    using RowsLaidOut = std::function<void(Eigen::Index first, Eigen::Index last)>;

    WeightPanels() = default;
    // From a weight's values as they lie in memory: [out, in], or [in, out] when
    // `transposed` (GPT-2's Conv1D); rows `row_stride` floats apart. `laid_out`, when
    // given, hears of each piece of rows done ([out, in] only).
    WeightPanels(const float* stored, Eigen::Index out, Eigen::Index in, Eigen::Index row_stride, bool transposed,
                 const RowsLaidOut& laid_out = {});
    // The same from 16-bit values (`element`: BF16 or F16), which the panels keep as they are.
    WeightPanels(const std::uint16_t* stored, DType element, Eigen::Index out, Eigen::Index in, Eigen::Index row_stride,
                 bool transposed, const RowsLaidOut& laid_out = {});
    // Room for an [out, in] weight, to be filled by assign(): inside a parallel region,
    // where nothing may allocate (an exception there cannot reach the caller).
    WeightPanels(Eigen::Index out, Eigen::Index in);
    // Lays out new values of the shape this was made for, in place (no allocation); F32
    // panels only.
    void assign(const float* stored, Eigen::Index row_stride, bool transposed);

    Eigen::Index rows() const { return out_; }   // out
    Eigen::Index cols() const { return in_; }    // in
    DType element() const { return element_; }   // F32, BF16 or F16
    // The bytes the panels take.
    std::size_t bytes() const { return static_cast<std::size_t>(values_.size()) * 4 + halves_.size() * 2; }
    // The [out, in] values back from the panels (tests).
    Matrix to_matrix() const;

    // y = scale * x W^T (+ bias: [out]), x [T, in], y [T, out]; on every compute thread
    // (on this one alone when called from one of them).
    void multiply(const ConstMatrixRef& x, MatrixRef y, const Vector* bias = nullptr, float scale = 1.0f) const;

    // The kernel each product runs, checked against the CPU at run time (so portable
    // builds get them too): `best` is AVX-512 where the CPU has it, else AVX2 + FMA, else
    // plain C++ loops that compute the same; `avx2` stops at AVX2 (tests compare them).
    enum class Kernel { best, avx2, portable };
    void multiply_with(Kernel kernel, const ConstMatrixRef& x, MatrixRef y, const Vector* bias,
                       float scale = 1.0f) const;

    // As multiply_with(), where each row of the product needs only its start: causal
    // attention, where query i reads keys [0, ends[i]) alone (ends: [T]). What a tile of 6
    // rows needs none of is skipped: half of a causal map's products.
    // - Leading::outputs: row i of y is computed over columns [0, ends[i]) at least; the
    //   rest of the row may be left as it was. ends[i] in [0, out].
    // - Leading::inputs: row i of x is 0 from column ends[i] on (as masked weights are),
    //   so a tile reads its inputs only up to its rows' largest end. ends[i] in [0, in].
    // The values computed are those multiply_with() computes: bit for bit with the AVX2 and
    // AVX-512 kernels; with the portable loops, to within an ulp (the compiler vectorises
    // those differently for different lengths).
    enum class Leading { outputs, inputs };
    void multiply_leading(Kernel kernel, const ConstMatrixRef& x, MatrixRef y, std::span<const Eigen::Index> ends,
                          Leading what, float scale = 1.0f) const;
    // One of several products of the same x (multiply_each): y [T, out] = x W^T (+ bias).
    struct Output {
        const WeightPanels* weights;
        MatrixRef y;
        const Vector* bias = nullptr;
    };
    static constexpr std::size_t max_outputs = 4;
    // Each output's product, made as one: x is packed once, and the pieces of all of them
    // are shared out in one parallel region (self-attention's q, k and v where a
    // checkpoint holds them as three weights, as ViT and BERT do). At most max_outputs,
    // all of x's width.
    static void multiply_each(const ConstMatrixRef& x, std::span<const Output> outputs, Kernel kernel = Kernel::best);

private:
    // ends: empty, or the rows' leading parts (multiply_leading).
    static void multiply_all(Kernel kernel, const ConstMatrixRef& x, std::span<const Output> outputs, float scale,
                             std::span<const Eigen::Index> ends = {}, Leading what = Leading::outputs);

    // Panel p's first element (float, or 16 bits wide).
    const void* panel(Eigen::Index p) const;

    // [panels][in][16]; the last panel's missing columns are 0. One of the two is used:
    Vector values_;                       // F32
    std::vector<std::uint16_t> halves_;   // BF16 or F16, as stored
    Eigen::Index out_ = 0;
    Eigen::Index in_ = 0;
    DType element_ = DType::F32;
};

}   // namespace headscope
