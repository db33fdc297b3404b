#include "ui/views/view_list.h"

namespace headscope::ui {

// Each view's file, ui/views/<name>_view.cpp, defines its factory.
std::unique_ptr<View> make_matrix_view();
std::unique_ptr<View> make_tokens_view();
std::unique_ptr<View> make_image_view();
std::unique_ptr<View> make_model_view();
std::unique_ptr<View> make_compare_view();
std::unique_ptr<View> make_stages_view();
std::unique_ptr<View> make_heads_view();
std::unique_ptr<View> make_rollout_view();
std::unique_ptr<View> make_similarity_view();

std::vector<std::unique_ptr<View>> make_views() {
    // The tabs, in order; the first is the default.
    constexpr std::unique_ptr<View> (*factories[])() = {
        make_matrix_view, make_tokens_view, make_image_view,   make_model_view,      make_compare_view,
        make_stages_view, make_heads_view,  make_rollout_view, make_similarity_view,
    };
    std::vector<std::unique_ptr<View>> views;
    for (const auto make : factories) views.push_back(make());
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
