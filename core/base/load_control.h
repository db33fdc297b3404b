#pragma once
// What the caller of a slow model load can see and do while it runs: how far it has
// come, and a request to stop. Checkpoint loaders report the fraction of the weight
// bytes read so far and check the stop request between tensors, so a user can watch
// a 500 MB checkpoint come in and give up on it; a stopped load throws LoadCancelled
// and leaves nothing behind.

#include "core/base/error.h"

#include <atomic>
#include <functional>

namespace headscope {

class LoadCancelled : public Error {
public:
    LoadCancelled() : Error("loading was cancelled") {}
};

struct LoadControl {
    std::function<void(double fraction)> on_progress;   // 0..1, called on the loading thread
    const std::atomic<bool>* cancel = nullptr;          // set to true (from any thread) to stop

    // Reports `fraction` and throws LoadCancelled when a stop was asked for.
    void report(double fraction) const {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) throw LoadCancelled();
        if (on_progress) on_progress(fraction);
    }
};

}   // namespace headscope
