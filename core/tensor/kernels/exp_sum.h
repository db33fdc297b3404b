#pragma once
// The exponentials of a softmax row: values[i] = exp(values[i] - shift) in place, and
// their sum, in one pass. With AVX2 and FMA this is Cephes' expf polynomial (the one
// Eigen's pexp uses, within 1e-7 relative) with a direct 2^n, about 3x faster than
// Eigen's exp followed by a separate sum, which rebuilds 2^n for the whole float range;
// a softmax only ever takes exp of values <= 0 (each row minus its maximum). Built for
// AVX-512 (-march=native on such a CPU), the same 16 floats at a time.
// Elsewhere it is Eigen's exp and sum, with the same underflow to 0.

#include <Eigen/Core>

namespace headscope {

// Expects values[i] - shift <= 0 (shift = the row's maximum); below -87.3, where exp
// leaves the normal floats, the result is 0 (so is exp(-inf)). NaN stays NaN.
float exp_shifted_sum(float* values, Eigen::Index n, float shift);

// The other two passes of a softmax row, vectorised the same way (Eigen's reductions and
// products on a row of dynamic length spend much of a short row in their set-up and tail):
// the largest of values[0, n) (n >= 1; -inf when all are), and values[i] *= factor.
float max_value(const float* values, Eigen::Index n);
void scale_values(float* values, Eigen::Index n, float factor);

}   // namespace headscope
