#pragma once
// The Tokens view: lines from each query to the keys it attends, one colour per head.

#include "ui/views/view.h"

namespace headscope::ui {

class TokensView final : public View {
public:
    std::string_view name() const override { return "tokens"; }
    const char* title() const override { return "Tokens"; }
    std::string_view summary() const override {
        return "lines from each query to the keys it attends, one colour per head";
    }
    void draw(ViewContext& context) override;
};

}   // namespace headscope::ui
