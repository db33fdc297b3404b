#include "session/map_cache.h"

#include "core/base/memory_room.h"

#include <algorithm>

namespace headscope::session {

namespace {

std::size_t map_bytes(const Matrix& map) { return static_cast<std::size_t>(map.size()) * sizeof(float); }

}   // namespace

MapCache::MapCache(std::size_t budget_bytes) : budget_(budget_bytes) {}

std::shared_ptr<const Matrix> MapCache::get(const Model& model, const ModelTrace& run, Eigen::Index layer,
                                            Eigen::Index head) {
    {
        std::lock_guard lock(mutex_);
        const auto found = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
            return e.run == &run && e.layer == layer && e.head == head;
        });
        if (found != entries_.end()) {
            Entry entry = *found;   // the newest again
            entries_.erase(found);
            entries_.push_back(entry);
            return entry.map;
        }
    }
    // Computed outside the lock: a background job asking for another head does not wait
    // on this one (two threads asking for the same head both compute it, the same bits).
    auto map = std::make_shared<const Matrix>(model.head_map(run, layer, head));
    std::lock_guard lock(mutex_);
    entries_.push_back({&run, layer, head, map});
    bytes_ += map_bytes(*map);
    while (entries_.size() > 1 && bytes_ > budget_) {
        bytes_ -= map_bytes(*entries_.front().map);
        entries_.pop_front();
    }
    return map;
}

std::size_t MapCache::bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

std::size_t MapCache::default_budget(Eigen::Index tokens) {
    const double two_maps = 2.0 * static_cast<double>(tokens) * static_cast<double>(tokens) * sizeof(float);
    return static_cast<std::size_t>(std::max(two_maps, machine_memory().ram / 16.0));
}

}   // namespace headscope::session
