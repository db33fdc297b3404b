#include "core/nn/position.h"

#include "core/base/error.h"
#include "core/tensor/parallel.h"

#include <cmath>
#include <string>
#include <vector>

namespace headscope {

void apply_rotary(const Rotary& rotary, MatrixRef x, Eigen::Index n_heads, Eigen::Index first_position) {
    if (!rotary.active() || x.size() == 0) return;
    const Eigen::Index Dh = x.cols() / n_heads;
    const Eigen::Index r = rotary.rotary_width > 0 ? rotary.rotary_width : Dh;
    if (n_heads < 1 || x.cols() != n_heads * Dh || r % 2 != 0 || r > Dh) {
        throw Error("rotary positions: " + std::to_string(r) + " rotated features of heads " + std::to_string(Dh) +
                    " wide (expected an even number, at most the head width)");
    }
    const Eigen::Index half = r / 2;
    // transformers computes inv_freq = 1 / theta^(2i / r) and the angles in float32.
    std::vector<float> inverse_frequency(static_cast<std::size_t>(half));
    for (Eigen::Index i = 0; i < half; ++i) {
        inverse_frequency[static_cast<std::size_t>(i)] =
            static_cast<float>(1.0 / std::pow(rotary.theta, static_cast<double>(2 * i) / static_cast<double>(r)));
    }
    parallel_ranges(x.rows(), 10.0 * static_cast<double>(x.size()), [&](Eigen::Index first, Eigen::Index last) {
        std::vector<float> cosines(static_cast<std::size_t>(half));
        std::vector<float> sines(static_cast<std::size_t>(half));
        for (Eigen::Index t = first; t < last; ++t) {
            const auto position = static_cast<float>(first_position + t);
            for (Eigen::Index i = 0; i < half; ++i) {
                const float angle = position * inverse_frequency[static_cast<std::size_t>(i)];
                cosines[static_cast<std::size_t>(i)] = std::cos(angle);
                sines[static_cast<std::size_t>(i)] = std::sin(angle);
            }
            float* row = x.row(t).data();
            for (Eigen::Index h = 0; h < n_heads; ++h) {
                float* head = row + h * Dh;
                for (Eigen::Index i = 0; i < half; ++i) {
                    const float a = head[i];
                    const float b = head[i + half];
                    const float c = cosines[static_cast<std::size_t>(i)];
                    const float s = sines[static_cast<std::size_t>(i)];
                    head[i] = a * c - b * s;          // x * cos + rotate_half(x) * sin, first half
                    head[i + half] = b * c + a * s;   // second half
                }
            }
        }
    });
}

}   // namespace headscope
