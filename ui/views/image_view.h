#pragma once
// The Image view: attention over the picture's patches, and [CLS] of every head.

#include "ui/views/view.h"

#include <string>

namespace headscope::ui {

class ImageView final : public View {
public:
    std::string_view name() const override { return "image"; }
    const char* title() const override { return "Image"; }
    std::string_view summary() const override {
        return "attention over the picture's patches, and [CLS] of every head";
    }
    void draw(ViewContext& context) override;

private:
    void draw_patch_map(ViewContext& context, const Matrix& map, const std::string& key, int query);
    void draw_cls_of_every_head(ViewContext& context);
};

}   // namespace headscope::ui
