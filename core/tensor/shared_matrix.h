#pragma once
// A matrix that is made once and then only read, which copies share rather than
// duplicate: a run's logits ([T, V], 201 MB for GPT-2 at T = 1,000) and the residual
// stream it kept per layer. A window holds one run in several results at once (the run
// shown while its numbers are computed, the intact run shown again when the last head is
// switched back on, the layers a resumed run took over), and a copy of fresh memory
// costs more than computing the matrix did, where the first touch of each page is dear.
//
// It reads as a `const Matrix&` (implicitly, or get()); it is set whole, by assigning a
// Matrix, never changed in place.

#include "core/tensor/matrix.h"

#include <memory>
#include <utility>

namespace headscope {

class SharedMatrix {
public:
    SharedMatrix() = default;
    SharedMatrix(Matrix value)
        : held_(std::make_shared<const Matrix>(std::move(value))) {}   // NOLINT: reads as a Matrix
    SharedMatrix& operator=(Matrix value) {
        held_ = std::make_shared<const Matrix>(std::move(value));
        return *this;
    }

    const Matrix& get() const { return held_ ? *held_ : empty(); }
    operator const Matrix&() const { return get(); }   // NOLINT: reads as a Matrix
    // Whether `other` holds the very same matrix (shared, not equal).
    bool shares(const SharedMatrix& other) const { return held_ && held_ == other.held_; }

    Eigen::Index rows() const { return get().rows(); }
    Eigen::Index cols() const { return get().cols(); }
    Eigen::Index size() const { return get().size(); }
    const float* data() const { return get().data(); }
    float operator()(Eigen::Index row, Eigen::Index col) const { return get()(row, col); }
    auto row(Eigen::Index i) const { return get().row(i); }
    auto middleRows(Eigen::Index first, Eigen::Index n) const { return get().middleRows(first, n); }
    auto topRows(Eigen::Index n) const { return get().topRows(n); }
    auto bottomRows(Eigen::Index n) const { return get().bottomRows(n); }

private:
    static const Matrix& empty() {
        static const Matrix none;
        return none;
    }
    std::shared_ptr<const Matrix> held_;
};

}   // namespace headscope
