#pragma once
// The Rollout view: attention rollout through the layers.

#include "ui/views/view.h"

#include <cstdint>
#include <memory>
#include <string>

namespace headscope::ui {

class RolloutView final : public View {
public:
    std::string_view name() const override { return "rollout"; }
    const char* title() const override { return "Rollout"; }
    std::string_view summary() const override { return "attention rollout through the layers"; }
    void draw(ViewContext& context) override;

private:
    // The rollout on screen: kept while a slider's newer rollout computes (same result only).
    std::shared_ptr<const Matrix> rollout_shown_;
    std::uint64_t rollout_shown_generation_ = 0;
    std::string rollout_key(ViewContext& context) const;
    void draw_patch_rollout(ViewContext& context, const Matrix& R, const std::string& key);
    void draw_token_rollout(ViewContext& context, const Matrix& R);
};

}   // namespace headscope::ui
