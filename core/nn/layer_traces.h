#pragma once
// The layers of a run (ModelTrace::layers), each held by a shared pointer to a layer that
// never changes once added. A run resumed from another (RunOptions::resume_from) shares the
// layers before the resumed one with it instead of copying them: at T = 1,000 GPT-2 small's
// first five layers are 60 maps, 240 MB, that a window switching a head off in layer 5
// would otherwise copy into fresh memory on every switch. Reading is a vector's.

#include "core/nn/attention.h"

#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

namespace headscope {

class LayerTraces {
    using Held = std::vector<std::shared_ptr<const AttentionTrace>>;

public:
    using value_type = AttentionTrace;

    class const_iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = AttentionTrace;
        using difference_type = std::ptrdiff_t;
        using pointer = const AttentionTrace*;
        using reference = const AttentionTrace&;

        const_iterator() = default;
        explicit const_iterator(Held::const_iterator at) : at_(at) {}
        reference operator*() const { return **at_; }
        pointer operator->() const { return at_->get(); }
        reference operator[](difference_type n) const { return *at_[n]; }
        const_iterator& operator++() {
            ++at_;
            return *this;
        }
        const_iterator operator++(int) { return const_iterator(at_++); }
        const_iterator& operator--() {
            --at_;
            return *this;
        }
        const_iterator operator--(int) { return const_iterator(at_--); }
        const_iterator& operator+=(difference_type n) {
            at_ += n;
            return *this;
        }
        const_iterator& operator-=(difference_type n) {
            at_ -= n;
            return *this;
        }
        friend const_iterator operator+(const_iterator i, difference_type n) { return i += n; }
        friend const_iterator operator+(difference_type n, const_iterator i) { return i += n; }
        friend const_iterator operator-(const_iterator i, difference_type n) { return i -= n; }
        friend difference_type operator-(const const_iterator& a, const const_iterator& b) { return a.at_ - b.at_; }
        friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.at_ == b.at_; }
        friend bool operator<(const const_iterator& a, const const_iterator& b) { return a.at_ < b.at_; }
        friend bool operator>(const const_iterator& a, const const_iterator& b) { return b < a; }
        friend bool operator<=(const const_iterator& a, const const_iterator& b) { return !(b < a); }
        friend bool operator>=(const const_iterator& a, const const_iterator& b) { return !(a < b); }

    private:
        Held::const_iterator at_;
    };

    std::size_t size() const { return layers_.size(); }
    bool empty() const { return layers_.empty(); }
    const AttentionTrace& operator[](std::size_t l) const { return *layers_[l]; }
    const AttentionTrace& front() const { return *layers_.front(); }
    const AttentionTrace& back() const { return *layers_.back(); }
    const_iterator begin() const { return const_iterator(layers_.cbegin()); }
    const_iterator end() const { return const_iterator(layers_.cend()); }

    void reserve(std::size_t n) { layers_.reserve(n); }
    // A layer just computed, held from now on as it is.
    void push_back(AttentionTrace layer) {
        layers_.push_back(std::make_shared<const AttentionTrace>(std::move(layer)));
    }
    // The first n layers of `from`, shared with it (not copied), in place of any held.
    void share_first(const LayerTraces& from, std::size_t n) {
        layers_.assign(from.layers_.begin(), from.layers_.begin() + static_cast<std::ptrdiff_t>(n));
    }
    // Whether layer l is the very object `other` holds at l (shared, not an equal copy).
    bool shares(std::size_t l, const LayerTraces& other) const {
        return l < layers_.size() && l < other.layers_.size() && layers_[l] == other.layers_[l];
    }

private:
    Held layers_;
};
static_assert(std::random_access_iterator<LayerTraces::const_iterator>);

}   // namespace headscope
