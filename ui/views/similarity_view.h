#pragma once
// The Similarity view: how alike the heads' maps are: divergence matrix and a 2-D map.

#include "core/analysis/head_similarity.h"
#include "ui/views/view.h"

#include <string>

namespace headscope::ui {

class SimilarityView final : public View {
public:
    std::string_view name() const override { return "similarity"; }
    const char* title() const override { return "Similarity"; }
    std::string_view summary() const override {
        return "how alike the heads' maps are: divergence matrix and a 2-D map";
    }
    void draw(ViewContext& context) override;

private:
    std::string similarity_key(ViewContext& context) const;
    void draw_divergence_matrix(ViewContext& context, const HeadSimilarity& s, const std::string& key, float side);
    void draw_head_map(ViewContext& context, const HeadSimilarity& s, float side);
};

}   // namespace headscope::ui
