#pragma once
// The Matrix view: one head's [T, T] map, with the custom-mask editor.

#include "ui/views/view.h"

namespace headscope::ui {

class MatrixView final : public View {
public:
    std::string_view name() const override { return "matrix"; }
    const char* title() const override { return "Matrix"; }
    std::string_view summary() const override { return "one head's [T, T] map, with the custom-mask editor"; }
    void draw(ViewContext& context) override;
};

}   // namespace headscope::ui
