#pragma once
// The Compare view: two maps side by side: heads, layers, mask on/off, ablation, two inputs.

#include "ui/views/view.h"

#include <string>

namespace headscope::ui {

class CompareView final : public View {
public:
    std::string_view name() const override { return "compare"; }
    const char* title() const override { return "Compare"; }
    std::string_view summary() const override {
        return "two maps side by side: heads, layers, mask on/off, ablation, two inputs";
    }
    session::ViewNeeds needs(const session::AppState& state) const override {
        return {.flipped_causal = state.compare_mode == session::CompareMode::mask_on_off,
                .second_input = state.compare_mode == session::CompareMode::two_inputs};
    }
    void draw(ViewContext& context) override;

private:
    struct Sides;   // the two maps compared (compare_view.cpp)
    void choose_two_heads(ViewContext& context, Sides& sides);
    void choose_two_layers(ViewContext& context, Sides& sides);
    void choose_mask_on_off(ViewContext& context, Sides& sides);
    void choose_ablation_on_off(ViewContext& context, Sides& sides);
    void choose_two_inputs(ViewContext& context, Sides& sides);
    void draw_side_by_side(ViewContext& context, const Sides& sides);
    void draw_layer_pairs(ViewContext& context);

    // Two layers' heads averaged, and for which result / layers (their key).
    std::string layer_means_key_;
    Matrix layer_mean_a_;
    Matrix layer_mean_b_;
    std::string compare_image_edit_;     // input B's path while typing (applied on Enter)
    std::string compare_image_source_;   // the applied path compare_image_edit_ was last reset from
};

}   // namespace headscope::ui
