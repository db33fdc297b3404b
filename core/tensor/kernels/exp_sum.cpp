#include "core/tensor/kernels/exp_sum.h"

#include <algorithm>
#include <limits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace headscope {

namespace {
// Below this exp leaves the normal floats; every path gives exactly 0 there.
constexpr float lowest_normal_log = -87.33654f;   // ln of the smallest normal float
}   // namespace

#if defined(__AVX2__) && defined(__FMA__)
namespace {
// Cephes' expf, shared by both widths below: exp(x) = 2^n * e^r, n = round(x / ln 2), r
// the rest, ln 2 split in two parts so that r keeps its low bits, and e^r = 1 + r +
// r^2 * p(r) with p of degree 5 (its coefficients from the highest power down).
constexpr float log2_e = 1.44269504088896341f;
constexpr float ln2_high = 0.693359375f;
constexpr float ln2_low = -2.12194440e-4f;
constexpr float exp_poly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
}   // namespace
#endif

#if defined(__AVX512F__)

namespace {

// exp_nonpositive below, 16 floats at a time; 2^n by scalef (exact for these n). No clamp
// of x into [-87.3, 0] is needed: below, the mask makes the result 0 whatever the steps
// computed (a sixth fewer instructions per exp than clamping first), and x <= 0 is given.
__m512 exp_nonpositive(__m512 x) {
    const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(lowest_normal_log), _CMP_NLT_UQ);   // true for NaN
    const __m512 n =
        _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(log2_e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_high), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_low), r);
    __m512 p = _mm512_set1_ps(exp_poly[0]);
    for (int k = 1; k < 6; ++k) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(exp_poly[k]));
    const __m512 e = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(normal, e, n);
}

}   // namespace

float exp_shifted_sum(float* values, Eigen::Index n, float shift) {
    const __m512 s = _mm512_set1_ps(shift);
    __m512 sum = _mm512_setzero_ps();
    Eigen::Index i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(values + i), s));
        _mm512_storeu_ps(values + i, e);
        sum = _mm512_add_ps(sum, e);
    }
    if (i < n) {   // the last 1..15: a masked load reads nothing past the row's end
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, values + i), s));
        _mm512_mask_storeu_ps(values + i, mask, e);
        sum = _mm512_mask_add_ps(sum, mask, sum, e);
    }
    return _mm512_reduce_add_ps(sum);
}

float max_value(const float* values, Eigen::Index n) {
    // Four chains of maxima, so that a row's loads are not one long dependency.
    const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
    Eigen::Index i = 0;
    for (; i + 64 <= n; i += 64) {
        m0 = _mm512_max_ps(m0, _mm512_loadu_ps(values + i));
        m1 = _mm512_max_ps(m1, _mm512_loadu_ps(values + i + 16));
        m2 = _mm512_max_ps(m2, _mm512_loadu_ps(values + i + 32));
        m3 = _mm512_max_ps(m3, _mm512_loadu_ps(values + i + 48));
    }
    for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(m0, _mm512_loadu_ps(values + i));
    if (i < n) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        m1 = _mm512_mask_max_ps(m1, mask, m1, _mm512_maskz_loadu_ps(mask, values + i));
    }
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

void scale_values(float* values, Eigen::Index n, float factor) {
    const __m512 f = _mm512_set1_ps(factor);
    Eigen::Index i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(values + i, _mm512_mul_ps(_mm512_loadu_ps(values + i), f));
    if (i < n) {
        const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(values + i, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, values + i), f));
    }
}

#elif defined(__AVX2__) && defined(__FMA__)

namespace {

// exp(x) for x <= 0: 2^n * e^r with n = round(x / ln 2) and |r| <= ln 2 / 2, e^r from
// Cephes' degree-5 polynomial, 2^n built from its bits. Below -87.3 (where exp leaves the
// normal floats) it is exactly 0, so a masked or far-off key weighs nothing.
__m256 exp_nonpositive(__m256 x) {
    const __m256 lowest = _mm256_set1_ps(lowest_normal_log);
    const __m256 underflows = _mm256_cmp_ps(x, lowest, _CMP_LT_OQ);   // false for NaN
    // max/min return their second operand when either is NaN: x goes second, so a NaN
    // score stays NaN instead of being clamped into a number.
    x = _mm256_max_ps(lowest, x);
    x = _mm256_min_ps(_mm256_set1_ps(0.0f), x);
    const __m256 round_magic = _mm256_set1_ps(12582912.0f);   // 1.5 * 2^23: adding it rounds to an integer
    const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(log2_e), round_magic);
    const __m256 n = _mm256_sub_ps(t, round_magic);
    const __m256i n_int = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(round_magic));
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(ln2_high), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(ln2_low), r);
    __m256 p = _mm256_set1_ps(exp_poly[0]);
    for (int k = 1; k < 6; ++k) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(exp_poly[k]));
    const __m256 e = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    const __m256 two_to_n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n_int, _mm256_set1_epi32(127)), 23));
    return _mm256_andnot_ps(underflows, _mm256_mul_ps(e, two_to_n));
}

}   // namespace

float exp_shifted_sum(float* values, Eigen::Index n, float shift) {
    const __m256 s = _mm256_set1_ps(shift);
    __m256 sum = _mm256_setzero_ps();
    Eigen::Index i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(values + i), s));
        _mm256_storeu_ps(values + i, e);
        sum = _mm256_add_ps(sum, e);
    }
    if (i < n) {   // the last 1..7: a masked load reads nothing past the row's end
        alignas(32) int lanes[8];
        for (int j = 0; j < 8; ++j) lanes[j] = i + j < n ? -1 : 0;
        const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
        const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(values + i, mask), s));
        _mm256_maskstore_ps(values + i, mask, e);
        sum = _mm256_add_ps(sum, _mm256_and_ps(e, _mm256_castsi256_ps(mask)));
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sum);
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

float max_value(const float* values, Eigen::Index n) {
    const __m256 lowest = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256 m0 = lowest, m1 = lowest;
    Eigen::Index i = 0;
    for (; i + 16 <= n; i += 16) {
        m0 = _mm256_max_ps(m0, _mm256_loadu_ps(values + i));
        m1 = _mm256_max_ps(m1, _mm256_loadu_ps(values + i + 8));
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, _mm256_max_ps(m0, m1));
    float max = lanes[0];
    for (int j = 1; j < 8; ++j) max = std::max(max, lanes[j]);
    for (; i < n; ++i) max = std::max(max, values[i]);
    return max;
}

void scale_values(float* values, Eigen::Index n, float factor) {
    const __m256 f = _mm256_set1_ps(factor);
    Eigen::Index i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(values + i, _mm256_mul_ps(_mm256_loadu_ps(values + i), f));
    for (; i < n; ++i) values[i] *= factor;
}

#else

float exp_shifted_sum(float* values, Eigen::Index n, float shift) {
    Eigen::Map<Eigen::ArrayXf> row(values, n);
    const auto shifted = row - shift;   // element by element: no aliasing across entries
    row = (shifted < lowest_normal_log).select(0.0f, shifted.exp());
    return row.sum();
}

float max_value(const float* values, Eigen::Index n) { return Eigen::Map<const Eigen::ArrayXf>(values, n).maxCoeff(); }

void scale_values(float* values, Eigen::Index n, float factor) { Eigen::Map<Eigen::ArrayXf>(values, n) *= factor; }

#endif

}   // namespace headscope
