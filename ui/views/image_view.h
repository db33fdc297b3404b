#pragma once
// The Image view: attention over the picture's patches, and [CLS] of every head.

#include "ui/views/view.h"

namespace headscope::ui {

class ImageView final : public View {
public:
    std::string_view name() const override { return "image"; }
    const char* title() const override { return "Image"; }
    std::string_view summary() const override {
        return "attention over the picture's patches, and [CLS] of every head";
    }
    void draw(ViewContext& context) override;
};

}   // namespace headscope::ui
