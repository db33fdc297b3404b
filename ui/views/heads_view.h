#pragma once
// The Heads view: head metrics: table, scatter, ablation effect, importance scan.

#include "core/analysis/ablation_effects.h"
#include "ui/views/view.h"

#include <memory>
#include <string>

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
    void draw_importance_scan_controls(ViewContext& context, const std::string& key,
                                       const std::shared_ptr<const ImportanceScan>& scan);
    void draw_importance_map(ViewContext& context, const ImportanceScan& scan, const std::string& key, float avail,
                             float plot_w, float plot_h);
    void draw_metrics_table(ViewContext& context, const ImportanceScan* scan);
    void draw_metric_scatter(ViewContext& context, float width, float height);
};

}   // namespace headscope::ui
