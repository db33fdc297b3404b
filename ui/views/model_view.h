#pragma once
// The Model view: every head of every layer as a grid of thumbnails.

#include "ui/views/view.h"

namespace headscope::ui {

class ModelView final : public View {
public:
    std::string_view name() const override { return "model"; }
    const char* title() const override { return "Model"; }
    std::string_view summary() const override { return "every head of every layer as a grid of thumbnails"; }
    void draw(ViewContext& context) override;
};

}   // namespace headscope::ui
