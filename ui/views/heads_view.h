#pragma once
// The Heads view: head metrics: table, scatter, ablation effect, importance scan.

#include "ui/views/view.h"

namespace headscope::ui {

class HeadsView final : public View {
public:
    std::string_view name() const override { return "heads"; }
    const char* title() const override { return "Heads"; }
    std::string_view summary() const override {
        return "head metrics: table, scatter, ablation effect, importance scan";
    }
    void draw(ViewContext& context) override;

private:
    void draw_metric_scatter(ViewContext& context, float width, float height);
};

}   // namespace headscope::ui
