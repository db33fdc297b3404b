#include "ui/views/view_list.h"

#include "ui/views/compare_view.h"
#include "ui/views/heads_view.h"
#include "ui/views/image_view.h"
#include "ui/views/matrix_view.h"
#include "ui/views/model_view.h"
#include "ui/views/rollout_view.h"
#include "ui/views/similarity_view.h"
#include "ui/views/stages_view.h"
#include "ui/views/tokens_view.h"

namespace headscope::ui {

std::vector<std::unique_ptr<View>> make_views() {
    std::vector<std::unique_ptr<View>> views;
    views.push_back(std::make_unique<MatrixView>());
    views.push_back(std::make_unique<TokensView>());
    views.push_back(std::make_unique<ImageView>());
    views.push_back(std::make_unique<ModelView>());
    views.push_back(std::make_unique<CompareView>());
    views.push_back(std::make_unique<StagesView>());
    views.push_back(std::make_unique<HeadsView>());
    views.push_back(std::make_unique<RolloutView>());
    views.push_back(std::make_unique<SimilarityView>());
    return views;
}

std::string view_names() {
    const auto views = make_views();
    std::string names;
    for (std::size_t i = 0; i < views.size(); ++i) {
        if (i > 0) names += i + 1 == views.size() ? " or " : ", ";
        names += views[i]->name();
    }
    return names;
}

std::string view_summaries() {
    std::string text;
    for (const auto& view : make_views()) text.append(view->name()).append(": ").append(view->summary()).append("\n");
    return text;
}

bool is_view_name(const std::string& name) {
    for (const auto& view : make_views()) {
        if (view->name() == name) return true;
    }
    return false;
}

}   // namespace headscope::ui
