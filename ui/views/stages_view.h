#pragma once
// The Stages view: one head step by step: Q, K, V, scores, mask, softmax, context.

#include "ui/views/view.h"

namespace headscope::ui {

class StagesView final : public View {
public:
    std::string_view name() const override { return "stages"; }
    const char* title() const override { return "Stages"; }
    std::string_view summary() const override {
        return "one head step by step: Q, K, V, scores, mask, softmax, context";
    }
    session::ViewNeeds needs(const session::AppState& /*state*/) const override { return {.stages_of_layer = true}; }
    void draw(ViewContext& context) override;
};

}   // namespace headscope::ui
