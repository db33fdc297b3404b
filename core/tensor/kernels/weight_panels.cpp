#include "core/tensor/kernels/weight_panels.h"

#include "core/tensor/parallel.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HEADSCOPE_X86_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace headscope {

namespace {

using Index = Eigen::Index;
constexpr Index width = WeightPanels::panel_width;
constexpr int tile_rows = 6;

// A panel's stored elements: float, or a checkpoint's 16-bit values kept as they are
// and widened to float as each step of a tile reads them. Both widenings are exact, so a
// 16-bit panel's products are bit for bit those of its values converted to float first.
struct Bf16 {
    std::uint16_t bits;
};
struct Half {
    std::uint16_t bits;
};
inline float widen(float value) { return value; }
inline float widen(Bf16 value) { return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16); }
inline float widen(Half value) { return half_to_float(value.bits); }
// Inputs per pass over a panel, with x read in place: the panel's block (384 x 16
// floats, 24 KB) stays in L1 while every row of x passes over it. (Side by side, 384 ran
// 3-4% faster than 256 on these models' shapes, and 512 or whole rows of 768 no faster.)
constexpr Index depth_block = 384;
// The same with x packed (below): a tile then reads two sequential streams, its x and
// the panel, which the hardware prefetches into L1 from L2 however long they are, so a
// pass can cover every input and y is written once. Side by side on one core, packed with
// passes of 768 (3072) inputs against in place with 384, on ViT's shapes: 1.14x on
// [198 x 768] x [768 -> 2304] and [768 -> 3072], 1.14x on [198 x 3072] x [3072 -> 768].
// Packed passes of 256, 384 or 1024 made ViT's products 5-17% slower than 3072, and 768
// no faster (a layer's products alternated in one process, 31 times each).
constexpr Index packed_depth_block = 3072;
// x is packed when a product has at least this many panels to read it (out >= 256):
// packing costs one pass over x, which pays off from 16 panels on (+3% at 256 outputs,
// and 9% slower at 64, the heads' value products).
constexpr Index min_panels_to_pack = 16;
// Rows of x per piece of work: 256 rows of a depth block (384 KB) stay in L2.
constexpr Index max_row_block = 256;

// One tile of y: up to 6 rows of x times a depth block of one panel, or of two
// neighbouring panels (the AVX-512 kernel: 6 x 32). Row r's input k is
// x[r * x_stride + k * x_step]: in place (x_step 1) or packed (x_stride 1, x_step 6).
struct Tile {
    Index depth;
    const float* x;   // the first row's first input of this depth block
    Index x_stride;
    Index x_step;
    int rows;            // 1..6
    const void* panel;   // [depth][16] elements (float, Bf16 or Half: the kernel's)
    int panels;          // 1, or 2: the second panel_stride elements after the first
    Index panel_stride;
    float* y;   // the tile's first value
    Index y_stride;
    int cols;            // 1..16 per panel
    const float* bias;   // the tile's `cols` biases; null: none
    float scale;         // multiplies the product (not the bias)
    bool add_to_y;       // a later depth block: add onto what is there
};

// Writes the accumulated tile (row r's sums at acc[r * width]): y = scale * acc (+ bias)
// on the first depth block, y += scale * acc after. A one-panel tile.
void finish(const Tile& t, const float* acc) {
    for (int r = 0; r < t.rows; ++r) {
        float* y = t.y + r * t.y_stride;
        for (int j = 0; j < t.cols; ++j) {
            const float product = t.scale * acc[r * width + j];
            if (t.add_to_y) {
                y[j] += product;
            } else {
                y[j] = t.bias != nullptr ? product + t.bias[j] : product;
            }
        }
    }
}

template <typename W>
void tile_portable(const Tile& t) {
    eigen_assert(t.panels == 1);
    float acc[tile_rows][width] = {};
    for (int r = 0; r < t.rows; ++r) {
        const float* x = t.x + r * t.x_stride;
        for (Index k = 0; k < t.depth; ++k) {
            const float a = x[k * t.x_step];
            const W* w = static_cast<const W*>(t.panel) + k * width;
            for (Index j = 0; j < width; ++j) acc[r][j] += a * widen(w[j]);
        }
    }
    finish(t, acc[0]);
}

#ifdef HEADSCOPE_X86_KERNELS
// Eight of a panel's weights as floats: loaded, or loaded and widened (BF16: the bits
// moved to the top half; F16: F16C's conversion, which every AVX2 CPU has).
__attribute__((target("avx2,fma,f16c"), always_inline)) inline __m256 load8(const float* w) {
    return _mm256_loadu_ps(w);
}
__attribute__((target("avx2,fma,f16c"), always_inline)) inline __m256 load8(const Bf16* w) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
__attribute__((target("avx2,fma,f16c"), always_inline)) inline __m256 load8(const Half* w) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
}
// Sixteen, with AVX-512.
__attribute__((target("avx512f"), always_inline)) inline __m512 load16(const float* w) { return _mm512_loadu_ps(w); }
__attribute__((target("avx512f"), always_inline)) inline __m512 load16(const Bf16* w) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
__attribute__((target("avx512f"), always_inline)) inline __m512 load16(const Half* w) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
}

// One row of a whole tile from its two accumulators: y = scale * acc + bias on the first
// depth block, y += scale * acc after. (A function of its own with the kernel's target,
// where a lambda would be compiled without it.)
__attribute__((target("avx2,fma,f16c"))) inline void store_row(const Tile& t, int r, __m256 lo, __m256 hi, bool add,
                                                               bool scaled, __m256 scale, __m256 b0, __m256 b1) {
    float* y = t.y + r * t.y_stride;
    if (scaled) {
        lo = _mm256_mul_ps(lo, scale);
        hi = _mm256_mul_ps(hi, scale);
    }
    if (add) {
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(y));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(y + 8));
    } else {
        lo = _mm256_add_ps(lo, b0);
        hi = _mm256_add_ps(hi, b1);
    }
    _mm256_storeu_ps(y, lo);
    _mm256_storeu_ps(y + 8, hi);
}

// One row's step of a tile: its x value times the panel's 16 weights, into its two
// accumulators. (Always inlined: the accumulators stay in registers.)
__attribute__((target("avx2,fma,f16c"), always_inline)) inline void fma_row(const float* x, __m256 w0, __m256 w1,
                                                                            __m256& lo, __m256& hi) {
    const __m256 a = _mm256_broadcast_ss(x);
    lo = _mm256_fmadd_ps(a, w0, lo);
    hi = _mm256_fmadd_ps(a, w1, hi);
}

// Twelve accumulators (6 rows x two 8-float halves), two panel loads and six broadcasts
// per input: the FMA units, not the loads, set the pace. A tile of fewer rows (the last
// of a block) has its own copy with fewer accumulators rather than computing rows it
// throws away: at T = 128 that waste was 3% of every product.
// R must be t.rows, and Step t.x_step: the tile's rows are read and written without
// checking.
template <int R, int Step, typename W>
__attribute__((target("avx2,fma,f16c"))) void tile_avx2_rows(const Tile& t) {
    static_assert(R >= 1 && R <= tile_rows);
    eigen_assert(t.rows == R && t.panels == 1 && t.x_step == Step && (Step == 1 || t.x_stride == 1));
    const float* x0 = t.x;
    // Packed rows are neighbours: a constant the addresses fold in.
    const Index stride = Step == 1 ? t.x_stride : 1;
    // Only the tile's own rows are addressed (unused pointers stay on row 0).
    const float* x1 = R > 1 ? x0 + stride : x0;
    const float* x2 = R > 2 ? x0 + 2 * stride : x0;
    const float* x3 = R > 3 ? x0 + 3 * stride : x0;
    const float* x4 = R > 4 ? x0 + 4 * stride : x0;
    const float* x5 = R > 5 ? x0 + 5 * stride : x0;
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const W* w = static_cast<const W*>(t.panel);
    const Index depth = t.depth;
    for (Index k = 0; k < depth; ++k, w += width) {
        const __m256 w0 = load8(w);
        const __m256 w1 = load8(w + 8);
        fma_row(x0 + k * Step, w0, w1, c00, c01);
        if constexpr (R > 1) fma_row(x1 + k * Step, w0, w1, c10, c11);
        if constexpr (R > 2) fma_row(x2 + k * Step, w0, w1, c20, c21);
        if constexpr (R > 3) fma_row(x3 + k * Step, w0, w1, c30, c31);
        if constexpr (R > 4) fma_row(x4 + k * Step, w0, w1, c40, c41);
        if constexpr (R > 5) fma_row(x5 + k * Step, w0, w1, c50, c51);
    }
    if (t.cols == width) {
        // A whole tile: written from the registers (most tiles).
        const bool add = t.add_to_y;
        const bool scaled = t.scale != 1.0f;
        const __m256 scale = _mm256_set1_ps(t.scale);
        const __m256 b0 = !add && t.bias != nullptr ? _mm256_loadu_ps(t.bias) : _mm256_setzero_ps();
        const __m256 b1 = !add && t.bias != nullptr ? _mm256_loadu_ps(t.bias + 8) : _mm256_setzero_ps();
        store_row(t, 0, c00, c01, add, scaled, scale, b0, b1);
        if constexpr (R > 1) store_row(t, 1, c10, c11, add, scaled, scale, b0, b1);
        if constexpr (R > 2) store_row(t, 2, c20, c21, add, scaled, scale, b0, b1);
        if constexpr (R > 3) store_row(t, 3, c30, c31, add, scaled, scale, b0, b1);
        if constexpr (R > 4) store_row(t, 4, c40, c41, add, scaled, scale, b0, b1);
        if constexpr (R > 5) store_row(t, 5, c50, c51, add, scaled, scale, b0, b1);
        return;
    }
    // A panel's last, partial tile: through memory, so finish() writes only its columns.
    alignas(32) float acc[tile_rows][width];
    const __m256 rows[tile_rows][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int r = 0; r < tile_rows; ++r) {
        _mm256_store_ps(acc[r], rows[r][0]);
        _mm256_store_ps(acc[r] + 8, rows[r][1]);
    }
    finish(t, acc[0]);
}

template <int Step, typename W>
void tile_avx2_step(const Tile& t) {
    switch (t.rows) {
    case 1: return tile_avx2_rows<1, Step, W>(t);
    case 2: return tile_avx2_rows<2, Step, W>(t);
    case 3: return tile_avx2_rows<3, Step, W>(t);
    case 4: return tile_avx2_rows<4, Step, W>(t);
    case 5: return tile_avx2_rows<5, Step, W>(t);
    default: return tile_avx2_rows<6, Step, W>(t);
    }
}

template <typename W>
void tile_avx2(const Tile& t) {
    if (t.x_step == 1) return tile_avx2_step<1, W>(t);
    tile_avx2_step<tile_rows, W>(t);
}

// The same with AVX-512: one 16-float register per row and panel, so a tile covers two
// panels (6 x 32, twelve accumulators, two panel loads and six broadcasts per input, as
// in the AVX2 tile) and each FMA does twice the work: on cores with two 512-bit FMA
// units (Intel's Xeons, AMD's Zen 5) that is twice the AVX2 kernel's peak. A panel's
// last columns, and a one-panel tile's, are written through masks, not through memory.
template <int R, int Step, int Panels, typename W>
__attribute__((target("avx512f"))) void tile_avx512_rows(const Tile& t) {
    static_assert(R >= 1 && R <= tile_rows && (Panels == 1 || Panels == 2));
    eigen_assert(t.rows == R && t.panels == Panels && t.x_step == Step && (Step == 1 || t.x_stride == 1));
    // Packed rows are neighbours: a constant the addresses fold in. Only the tile's own
    // rows are addressed.
    const Index stride = Step == 1 ? t.x_stride : 1;
    const float* x[tile_rows];
    for (int r = 0; r < tile_rows; ++r) x[r] = t.x + (r < R ? r : 0) * stride;
    __m512 acc[R][Panels];
    for (int r = 0; r < R; ++r) {
        for (int p = 0; p < Panels; ++p) acc[r][p] = _mm512_setzero_ps();
    }
    const W* w = static_cast<const W*>(t.panel);
    const Index second = Panels > 1 ? t.panel_stride : 0;
    const Index depth = t.depth;
    for (Index k = 0; k < depth; ++k, w += width) {
        const __m512 w0 = load16(w);
        const __m512 w1 = Panels > 1 ? load16(w + second) : w0;
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m512 a = _mm512_set1_ps(x[r][k * Step]);
            acc[r][0] = _mm512_fmadd_ps(a, w0, acc[r][0]);
            if constexpr (Panels > 1) acc[r][1] = _mm512_fmadd_ps(a, w1, acc[r][1]);
        }
    }
    const bool add = t.add_to_y;
    const bool scaled = t.scale != 1.0f;
    const __m512 scale = _mm512_set1_ps(t.scale);
    for (int p = 0; p < Panels; ++p) {
        const int cols = std::clamp(t.cols - p * static_cast<int>(width), 0, static_cast<int>(width));
        const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
        const __m512 bias =
            !add && t.bias != nullptr ? _mm512_maskz_loadu_ps(mask, t.bias + p * width) : _mm512_setzero_ps();
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            float* y = t.y + r * t.y_stride + p * width;
            __m512 v = scaled ? _mm512_mul_ps(acc[r][p], scale) : acc[r][p];
            v = _mm512_add_ps(v, add ? _mm512_maskz_loadu_ps(mask, y) : bias);
            _mm512_mask_storeu_ps(y, mask, v);
        }
    }
}

template <int Step, int Panels, typename W>
void tile_avx512_step(const Tile& t) {
    switch (t.rows) {
    case 1: return tile_avx512_rows<1, Step, Panels, W>(t);
    case 2: return tile_avx512_rows<2, Step, Panels, W>(t);
    case 3: return tile_avx512_rows<3, Step, Panels, W>(t);
    case 4: return tile_avx512_rows<4, Step, Panels, W>(t);
    case 5: return tile_avx512_rows<5, Step, Panels, W>(t);
    default: return tile_avx512_rows<6, Step, Panels, W>(t);
    }
}

template <typename W>
void tile_avx512(const Tile& t) {
    if (t.panels == 1) {
        if (t.x_step == 1) return tile_avx512_step<1, 1, W>(t);
        return tile_avx512_step<tile_rows, 1, W>(t);
    }
    if (t.x_step == 1) return tile_avx512_step<1, 2, W>(t);
    tile_avx512_step<tile_rows, 2, W>(t);
}

// Inputs [k, k + 8) of six rows into a packed tile: an 8 x 8 transpose in registers (the
// two missing rows are 0) and eight stores of six floats each. Each store writes eight,
// and the next overwrites the two extra; the last writes its six alone, so nothing past
// input k + 7 is touched (the next tile may be another thread's).
__attribute__((target("avx2"))) void pack_8_inputs(const float* const (&rows)[tile_rows], Index k, float* tile) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 t0 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[0] + k), _mm256_loadu_ps(rows[1] + k));
    const __m256 t1 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[0] + k), _mm256_loadu_ps(rows[1] + k));
    const __m256 t2 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[2] + k), _mm256_loadu_ps(rows[3] + k));
    const __m256 t3 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[2] + k), _mm256_loadu_ps(rows[3] + k));
    const __m256 t4 = _mm256_unpacklo_ps(_mm256_loadu_ps(rows[4] + k), _mm256_loadu_ps(rows[5] + k));
    const __m256 t5 = _mm256_unpackhi_ps(_mm256_loadu_ps(rows[4] + k), _mm256_loadu_ps(rows[5] + k));
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44);
    const __m256 s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44);
    const __m256 s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, zero, 0x44);
    const __m256 s5 = _mm256_shuffle_ps(t4, zero, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, zero, 0x44);
    const __m256 s7 = _mm256_shuffle_ps(t5, zero, 0xEE);
    // Column j (input k + j, rows 0..5 then two zeros) goes to tile[(k + j) * 6].
    float* out = tile + k * tile_rows;
    _mm256_storeu_ps(out + 0 * tile_rows, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(out + 1 * tile_rows, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(out + 2 * tile_rows, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(out + 3 * tile_rows, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(out + 4 * tile_rows, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(out + 5 * tile_rows, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(out + 6 * tile_rows, _mm256_permute2f128_ps(s2, s6, 0x31));
    const __m256 last = _mm256_permute2f128_ps(s3, s7, 0x31);
    _mm_storeu_ps(out + 7 * tile_rows, _mm256_castps256_ps128(last));
    _mm_storel_pi(reinterpret_cast<__m64*>(out + 7 * tile_rows + 4), _mm256_extractf128_ps(last, 1));
}

enum class Isa { portable, avx2, avx512 };

// F16C (the F16 widening), from CPUID leaf 1 (clang's __builtin_cpu_supports has no name for it).
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

// The widest kernel this CPU runs (read once: a fact about the CPU).
Isa cpu_isa() {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !cpu_has_f16c()) return Isa::portable;
    return __builtin_cpu_supports("avx512f") ? Isa::avx512 : Isa::avx2;
}
#else
enum class Isa { portable };
#endif

// The code `kernel` runs on this CPU: what was asked for, where the CPU has it.
Isa isa_for(WeightPanels::Kernel kernel) {
#ifdef HEADSCOPE_X86_KERNELS
    static const Isa cpu = cpu_isa();
    switch (kernel) {
    case WeightPanels::Kernel::best: return cpu;
    case WeightPanels::Kernel::avx2: return std::min(cpu, Isa::avx2);
    case WeightPanels::Kernel::portable: return Isa::portable;
    }
#endif
    (void)kernel;
    return Isa::portable;
}

// A kernel's tile function and how many panels one tile covers.
struct TileKernel {
    void (*run)(const Tile&);
    Index panels;
};

template <typename W>
TileKernel tile_kernel_for(Isa isa) {
#ifdef HEADSCOPE_X86_KERNELS
    if (isa == Isa::avx512) return {tile_avx512<W>, 2};
    if (isa == Isa::avx2) return {tile_avx2<W>, 1};
#endif
    (void)isa;
    return {tile_portable<W>, 1};
}

TileKernel tile_kernel(Isa isa, DType element) {
    switch (element) {
    case DType::BF16: return tile_kernel_for<Bf16>(isa);
    case DType::F16: return tile_kernel_for<Half>(isa);
    default: return tile_kernel_for<float>(isa);
    }
}

}   // namespace

namespace {

// Lays out `panels` ([panels][in][16], the last panel's missing columns already 0) from
// a weight's values as stored: [out, in], or [in, out] when `transposed`; on every core (a
// model's first forward lays out all its weights: GPT-2 small, 500 MB).
template <typename T>
void lay_out_panels(const T* stored, Index out, Index in, Index row_stride, bool transposed, T* panels,
                    Index first_panel, Index last_panel) {
    const double work = static_cast<double>(last_panel - first_panel) * width * static_cast<double>(in);
    parallel_ranges(last_panel - first_panel, work, [&](Index first, Index last) {
        for (Index p = first_panel + first; p < first_panel + last; ++p) {
            T* dst = panels + p * in * width;
            const Index cols = std::min(width, out - p * width);
            if (transposed) {
                // The memory holds [in, out]: a panel's 16 weights for input k are 16
                // neighbours in stored row k.
                for (Index k = 0; k < in; ++k) std::copy_n(stored + k * row_stride + p * width, cols, dst + k * width);
            } else {
                for (Index j = 0; j < cols; ++j) {
                    const T* row = stored + (p * width + j) * row_stride;
                    for (Index k = 0; k < in; ++k) dst[k * width + j] = row[k];
                }
            }
        }
    });
}

// Stored rows per piece of a layout that reports its progress (WeightPanels::RowsLaidOut).
constexpr Index rows_per_piece = 4096;

template <typename T>
void lay_out(const T* stored, Index out, Index in, Index row_stride, bool transposed, T* panels,
             const WeightPanels::RowsLaidOut& laid_out = {}) {
    const Index n_panels = (out + width - 1) / width;
    if (!laid_out || transposed) {
        lay_out_panels(stored, out, in, row_stride, transposed, panels, 0, n_panels);
        return;
    }
    const Index panels_per_piece = rows_per_piece / width;
    for (Index first = 0; first < n_panels; first += panels_per_piece) {
        const Index last = std::min(n_panels, first + panels_per_piece);
        lay_out_panels(stored, out, in, row_stride, transposed, panels, first, last);
        laid_out(first * width, std::min(out, last * width));
    }
}

// Room for the panels of an [out, in] weight, the last panel's missing columns 0 for good.
template <typename Buffer>
void make_room(Buffer& values, Index out, Index in) {
    values.resize((out + width - 1) / width * in * width);
    const Index cols = out % width;
    if (cols != 0) {
        auto* last = values.data() + (out / width) * in * width;
        for (Index k = 0; k < in; ++k) std::fill_n(last + k * width + cols, width - cols, 0);
    }
}

}   // namespace

WeightPanels::WeightPanels(const float* stored, Index out, Index in, Index row_stride, bool transposed,
                           const RowsLaidOut& laid_out)
    : WeightPanels(out, in) {
    lay_out(stored, out, in, row_stride, transposed, values_.data(), laid_out);
}

WeightPanels::WeightPanels(const std::uint16_t* stored, DType element, Index out, Index in, Index row_stride,
                           bool transposed, const RowsLaidOut& laid_out)
    : out_(out), in_(in), element_(element) {
    if (element != DType::BF16 && element != DType::F16) {
        throw std::invalid_argument("WeightPanels: 16-bit panels are BF16 or F16, not " +
                                    std::string(dtype_name(element)));
    }
    make_room(halves_, out, in);
    lay_out(stored, out, in, row_stride, transposed, halves_.data(), laid_out);
}

WeightPanels::WeightPanels(Index out, Index in) : out_(out), in_(in) { make_room(values_, out, in); }

void WeightPanels::assign(const float* stored, Index row_stride, bool transposed) {
    eigen_assert(element_ == DType::F32);
    lay_out(stored, out_, in_, row_stride, transposed, values_.data());
}

const void* WeightPanels::panel(Index p) const {
    const Index offset = p * in_ * width;
    if (element_ == DType::F32) return values_.data() + offset;
    return halves_.data() + offset;
}

Matrix WeightPanels::to_matrix() const {
    Matrix w(out_, in_);
    for (Index o = 0; o < out_; ++o) {
        const void* p = panel(o / width);
        for (Index k = 0; k < in_; ++k) {
            const Index at = k * width + o % width;
            switch (element_) {
            case DType::BF16: w(o, k) = widen(static_cast<const Bf16*>(p)[at]); break;
            case DType::F16: w(o, k) = widen(static_cast<const Half*>(p)[at]); break;
            default: w(o, k) = static_cast<const float*>(p)[at]; break;
            }
        }
    }
    return w;
}

namespace {

// One product's operands, as the blocks below read them: y = scale * x W^T (+ bias).
struct Product {
    const std::byte* panels;   // [panels][in][16] elements of element_size bytes
    Index element_size;
    Index out;
    Index in;
    TileKernel run_tile;
    // x in place ([T, in], rows x_stride apart), or packed: tile by tile of 6 rows,
    // each [in][6] (see pack_rows).
    const float* x;
    Index x_stride;
    bool packed;
    Index depth_block;
    float* y;
    Index y_stride;
    const float* bias;   // [out], or null
    float scale;
    // Row i's leading part (WeightPanels::multiply_leading), or null: every row whole.
    const Index* row_ends;
    bool ends_limit_inputs;
};

// The largest of rows [first, first + rows)'s ends: how far their tile must go.
Index tile_end(const Index* row_ends, Index first, int rows) {
    return *std::max_element(row_ends + first, row_ends + first + rows);
}

// Into how many row blocks the last group of panels per thread is cut.
constexpr Index tail_cut = 3;

// n rows rounded up to whole tiles of 6.
Index whole_tiles(Index n) { return (n + tile_rows - 1) / tile_rows * tile_rows; }

// Rows in equal blocks of at most 256, each a multiple of the tile's 6 rows.
Index row_block_size(Index T) {
    const Index row_blocks = (T + max_row_block - 1) / max_row_block;
    return whole_tiles((T + row_blocks - 1) / row_blocks);
}

// x's rows [first, first + 6) (fewer at its end) as one packed tile: [in][6], row r's
// input k at k * 6 + r; the missing rows of a last, short tile are 0.
void pack_rows(const ConstMatrixRef& x, Index first, float* tile, bool avx2) {
    const Index rows = std::min<Index>(tile_rows, x.rows() - first);
    const Index in = x.cols();
    Index k = 0;
#ifdef HEADSCOPE_X86_KERNELS
    if (avx2 && rows == tile_rows) {
        // 8 inputs at a time in registers (the scalar loop below cost 2.3% of a ViT forward).
        const float* const top = x.data() + first * x.outerStride();
        const Index stride = x.outerStride();
        const float* const row[tile_rows] = {
            top, top + stride, top + 2 * stride, top + 3 * stride, top + 4 * stride, top + 5 * stride};
        for (; k + 8 <= in; k += 8) pack_8_inputs(row, k, tile);
    }
#else
    (void)avx2;
#endif
    for (Index r = 0; r < tile_rows; ++r) {
        if (r >= rows) {
            for (Index j = k; j < in; ++j) tile[j * tile_rows + r] = 0.0f;
            continue;
        }
        const float* row = x.data() + (first + r) * x.outerStride();
        for (Index j = k; j < in; ++j) tile[j * tile_rows + r] = row[j];
    }
}

// Panels [first_panel, last_panel) over rows [first_row, last_row) (first_row a multiple
// of 6): every depth block, every tile's panels, every tile of rows.
void multiply_block(const Product& m, Index first_panel, Index last_panel, Index first_row, Index last_row) {
    const Index in = m.in;
    const Index block = m.depth_block;
    const Index panel_stride = in * width;   // elements
    const Index bytes = m.element_size;
    // Panel p's input k, as an address.
    const auto at = [&](Index p, Index k) { return m.panels + (p * panel_stride + k * width) * bytes; };
    const auto panels_from = [&](Index p) { return std::min(m.run_tile.panels, last_panel - p); };
    // Inputs per 64-byte line of a panel: one of float, two of a 16-bit panel.
    const Index inputs_per_line = std::max<Index>(1, 64 / (width * bytes));
    for (Index k = 0; k < in; k += block) {
        const Index depth = std::min(block, in - k);
        for (Index p = first_panel; p < last_panel; p += m.run_tile.panels) {
            const Index col = p * width;
            Tile tile{};
            tile.depth = depth;
            tile.x_stride = m.packed ? 1 : m.x_stride;
            tile.x_step = m.packed ? tile_rows : 1;
            tile.panel = at(p, k);
            tile.panels = static_cast<int>(panels_from(p));
            tile.panel_stride = panel_stride;
            tile.y_stride = m.y_stride;
            tile.cols = static_cast<int>(std::min(width * tile.panels, m.out - col));
            tile.bias = m.bias != nullptr ? m.bias + col : nullptr;
            tile.scale = m.scale;
            tile.add_to_y = k > 0;
            // The block this piece reads next comes from memory (weights are read once
            // per forward): ask for it into L2 a few lines per tile while this one
            // computes, as the hardware's prefetch stops at every 4 KB page.
            const std::byte* next = nullptr;
            Index next_lines = 0;    // 64-byte lines per panel of the next block
            Index next_panels = 0;   // the next tile's panels, panel_stride apart
            if (p + tile.panels < last_panel) {
                next = at(p + tile.panels, k);
                next_lines = (depth + inputs_per_line - 1) / inputs_per_line;
                next_panels = panels_from(p + tile.panels);
            } else if (k + block < in) {
                next = at(first_panel, k + block);
                next_lines = (std::min(block, in - k - block) + inputs_per_line - 1) / inputs_per_line;
                next_panels = panels_from(first_panel);
            }
            const Index tiles = (last_row - first_row + tile_rows - 1) / tile_rows;
            const Index lines_per_tile = (next_lines * next_panels + tiles - 1) / tiles;
            // The next line to ask for: its panel's start and its input in that panel
            // (counted along, not divided out per line: the division was 0.4% of ViT's CPU time).
            const std::byte* next_panel = next;
            Index next_line = 0;
            Index lines_left = next_lines * next_panels;
            for (Index r = first_row; r < last_row; r += tile_rows) {
                for (Index n = std::min(lines_left, lines_per_tile); n > 0; --n) {
                    __builtin_prefetch(next_panel + next_line * 64, 0, 2);
                    if (++next_line == next_lines) {
                        next_line = 0;
                        next_panel += panel_stride * bytes;
                    }
                }
                lines_left -= std::min(lines_left, lines_per_tile);
                tile.x = m.packed ? m.x + r * in + k * tile_rows : m.x + r * m.x_stride + k;
                tile.rows = static_cast<int>(std::min<Index>(tile_rows, last_row - r));
                tile.y = m.y + r * m.y_stride + col;
                if (m.row_ends != nullptr) {
                    const Index end = tile_end(m.row_ends, r, tile.rows);
                    if (!m.ends_limit_inputs) {
                        if (col >= end) continue;   // none of these outputs is needed
                    } else {
                        // Inputs past `end` are 0 in all the tile's rows: they add nothing.
                        // The first block is still run (if need be over no inputs) so that
                        // y gets its bias; later ones add, and are skipped.
                        tile.depth = std::clamp<Index>(end - k, 0, depth);
                        if (tile.depth == 0 && k > 0) continue;
                    }
                }
                m.run_tile.run(tile);
            }
        }
    }
}

}   // namespace

void WeightPanels::multiply(const ConstMatrixRef& x, MatrixRef y, const Vector* bias, float scale) const {
    multiply_with(Kernel::best, x, y, bias, scale);
}

void WeightPanels::multiply_with(Kernel kernel, const ConstMatrixRef& x, MatrixRef y, const Vector* bias,
                                 float scale) const {
    const Output output{this, y, bias};
    multiply_all(kernel, x, std::span(&output, 1), scale);
}

void WeightPanels::multiply_leading(Kernel kernel, const ConstMatrixRef& x, MatrixRef y, std::span<const Index> ends,
                                    Leading what, float scale) const {
    // Checked by the caller (attention, from its mask), not here: this runs inside parallel
    // regions, which an exception must not leave.
    eigen_assert(static_cast<Index>(ends.size()) == x.rows());
    eigen_assert(std::all_of(ends.begin(), ends.end(), [limit = what == Leading::outputs ? out_ : in_](Index end) {
        return end >= 0 && end <= limit;
    }));
    const Output output{this, y, nullptr};
    multiply_all(kernel, x, std::span(&output, 1), scale, ends, what);
}

void WeightPanels::multiply_each(const ConstMatrixRef& x, std::span<const Output> outputs, Kernel kernel) {
    if (outputs.size() > max_outputs) {
        throw std::invalid_argument("WeightPanels::multiply_each: at most " + std::to_string(max_outputs) + " outputs");
    }
    multiply_all(kernel, x, outputs, 1.0f);
}

// Called inside parallel regions too (a head's products): nothing here allocates but x's
// packed copy, which is only made outside them.
void WeightPanels::multiply_all(Kernel kernel, const ConstMatrixRef& x, std::span<const Output> outputs, float scale,
                                std::span<const Index> ends, Leading what) {
    eigen_assert(outputs.size() <= max_outputs);
    const Index T = x.rows();
    const Index in = x.cols();
    for (const Output& o : outputs) {
        eigen_assert(o.weights->in_ == in && o.y.rows() == T && o.y.cols() == o.weights->out_);
        eigen_assert(o.bias == nullptr || o.bias->size() == o.weights->out_);
        if (in == 0 && T > 0) {
            MatrixRef y = o.y;   // a view of the caller's matrix
            if (o.bias != nullptr) {
                y.rowwise() = o.bias->transpose();
            } else {
                y.setZero();
            }
        }
    }
    if (T == 0 || in == 0) return;
    Index panels = 0;
    double flops = 0.0;
    for (const Output& o : outputs) {
        panels += (o.weights->out_ + width - 1) / width;
        flops += 2.0 * static_cast<double>(T) * static_cast<double>(o.weights->out_) * static_cast<double>(in);
    }
    if (panels == 0) return;
    const Index row_block = row_block_size(T);
    const Index row_blocks = (T + row_block - 1) / row_block;
    // Pieces of a few panels each: enough that the threads finish close together (the
    // last piece is what the other thread waits for), few enough that each still reads x
    // from L2 many times over. 24 per thread ran 3-5% faster than 8, side by side.
    // A piece holds whole tiles (two panels each for AVX-512).
    const Isa isa = isa_for(kernel);
    const TileKernel run_tile = tile_kernel(isa, DType::F32);   // how many panels a tile covers
    const Index wanted_pieces = 24 * static_cast<Index>(compute_threads());
    const Index panels_per_piece =
        (std::clamp<Index>(panels * row_blocks / wanted_pieces, 1, 16) + run_tile.panels - 1) / run_tile.panels *
        run_tile.panels;
    // x is packed where enough panels read it, and where the room for it may be made
    // here: not inside a parallel region (one head's products), where nothing allocates.
    const bool pack = panels >= min_panels_to_pack && !in_parallel_region();
    const Index x_tiles = (T + tile_rows - 1) / tile_rows;
    std::unique_ptr<float[]> packed_x(pack ? new float[static_cast<std::size_t>(x_tiles * tile_rows * in)] : nullptr);
    // Each output's product, and where its panel groups start among all of them.
    std::array<Product, max_outputs> products;
    std::array<Index, max_outputs + 1> first_group{};
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const Output& o = outputs[i];
        MatrixRef y = o.y;   // a view of the caller's matrix
        products[i] = Product{static_cast<const std::byte*>(o.weights->panel(0)),
                              static_cast<Index>(dtype_size(o.weights->element_)),
                              o.weights->out_,
                              in,
                              tile_kernel(isa, o.weights->element_),
                              pack ? packed_x.get() : x.data(),
                              x.outerStride(),
                              pack,
                              pack ? packed_depth_block : depth_block / run_tile.panels,
                              y.data(),
                              y.outerStride(),
                              o.bias != nullptr ? o.bias->data() : nullptr,
                              scale,
                              ends.empty() ? nullptr : ends.data(),
                              what == Leading::inputs};
        const Index own_panels = (o.weights->out_ + width - 1) / width;
        first_group[i + 1] = first_group[i] + (own_panels + panels_per_piece - 1) / panels_per_piece;
    }
    const Index groups = first_group[outputs.size()];
    // The region ends when the thread with the last piece is done, the other one idle
    // meanwhile (half a piece on average). So the last group per thread is cut by rows
    // into thirds: the threads finish closer together, for a few panels read twice more.
    const Index threads = in_parallel_region() ? 1 : compute_threads();
    const Index tail_groups = threads > 1 ? std::min<Index>(groups, threads) : 0;
    const Index tail_row_block = whole_tiles((row_block + tail_cut - 1) / tail_cut);
    const Index tail_row_blocks = (T + tail_row_block - 1) / tail_row_block;
    const Index whole_pieces = (groups - tail_groups) * row_blocks;
    // Piece i: panel group i / row_blocks over row block i % row_blocks, so one group's
    // panels are reused from cache across the row blocks of a long input; after x's
    // tiles are packed, when they are, by the same threads. Then the last groups' pieces,
    // as many per group as it has short row blocks.
    parallel_items_after(
        pack ? x_tiles : 0,
        [&](Index tile) {
            pack_rows(x, tile * tile_rows, packed_x.get() + tile * tile_rows * in, isa != Isa::portable);
        },
        whole_pieces + tail_groups * tail_row_blocks, flops,
        [&](Index piece) {
            const bool whole = piece < whole_pieces;
            const Index rows_per_piece = whole ? row_block : tail_row_block;
            const Index blocks_per_group = whole ? row_blocks : tail_row_blocks;
            const Index index = whole ? piece : piece - whole_pieces;
            const Index group = (whole ? 0 : groups - tail_groups) + index / blocks_per_group;
            std::size_t i = 0;
            while (group >= first_group[i + 1]) ++i;
            const Product& m = products[i];
            const Index first_panel = (group - first_group[i]) * panels_per_piece;
            const Index first_row = index % blocks_per_group * rows_per_piece;
            multiply_block(m, first_panel, std::min((m.out + width - 1) / width, first_panel + panels_per_piece),
                           first_row, std::min(T, first_row + rows_per_piece));
        });
}

}   // namespace headscope
