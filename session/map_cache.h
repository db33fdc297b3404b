#pragma once
// The full maps of a run that streamed them (RunOptions::on_map), computed again when a
// view shows one (Model::head_map, bit for bit the map the run made) and kept among the
// last ones shown under a byte budget, so a view that draws a head every frame computes
// it once. Maps are handed out shared: dropping one from the cache never pulls it from
// under a view still drawing it. Safe to call from the window and a background job at once.

#include "core/models/model.h"

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

namespace headscope::session {

class MapCache {
public:
    // Keeps at most `budget_bytes` of maps (always the newest one, whatever its size).
    explicit MapCache(std::size_t budget_bytes);

    // Head (layer, head)'s map of `run`, a run of `model` whose layer streamed its maps.
    std::shared_ptr<const Matrix> get(const Model& model, const ModelTrace& run, Eigen::Index layer, Eigen::Index head);
    // The bytes of the maps kept now.
    std::size_t bytes() const;

    // The budget the window uses: a sixteenth of the machine's RAM, at least two maps of
    // `tokens` x `tokens`.
    static std::size_t default_budget(Eigen::Index tokens);

private:
    struct Entry {
        const ModelTrace* run = nullptr;
        Eigen::Index layer = 0;
        Eigen::Index head = 0;
        std::shared_ptr<const Matrix> map;
    };
    mutable std::mutex mutex_;
    std::deque<Entry> entries_;   // oldest first
    std::size_t bytes_ = 0;
    const std::size_t budget_;
};

}   // namespace headscope::session
