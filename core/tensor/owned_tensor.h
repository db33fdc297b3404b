#pragma once
// A tensor owned by value, as exports write it: a name, a shape and float32 values.

#include "core/tensor/matrix.h"
#include "core/tensor/safetensors.h"

#include <string>
#include <vector>

namespace headscope {

struct OwnedTensor {
    std::string name;
    Shape shape;
    std::vector<float> values;
};

// `m` as a tensor of `shape` (default: [rows, cols]); row-major values either way.
inline OwnedTensor owned_tensor(std::string name, const Matrix& m, Shape shape = {}) {
    if (shape.empty()) shape = {m.rows(), m.cols()};
    return {std::move(name), std::move(shape), std::vector<float>(m.data(), m.data() + m.size())};
}

inline OwnedTensor owned_tensor(std::string name, const Vector& v, Shape shape = {}) {
    if (shape.empty()) shape = {v.size()};
    return {std::move(name), std::move(shape), std::vector<float>(v.data(), v.data() + v.size())};
}

}   // namespace headscope
